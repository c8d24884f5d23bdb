//go:build wine

package wine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `service install` takes the node's folders over as join does, judging
// every entry below them first: a file with a second name (a hard link to
// a file outside the node's folders) and a folder that is a symbolic link
// are each refused with their path, and no service is installed. Wine
// shows both: it counts a file's hard links, and reports a Unix symbolic
// link to a directory as a reparse point when it lists its folder.
func TestServiceInstallRefusesLinksBelowTheNodesFolders(t *testing.T) {
	prefixC := filepath.Join(os.Getenv("WINEPREFIX"), "drive_c")
	kubeedge := filepath.Join(prefixC, "etc", "kubeedge")
	cfg := filepath.Join(kubeedge, "config", "edgecore.yaml")
	if _, err := os.Stat(cfg); err == nil {
		t.Fatalf("%s exists before the test; run edgecore.exe reset --force in this prefix", cfg)
	}
	if r := run(t, time.Minute, "config", "-e", "127.0.0.1:10000", "-t", testToken, "--offline"); r.code != 0 {
		t.Fatalf("config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	outside := filepath.Join(prefixC, "planted")
	t.Cleanup(func() {
		os.Remove(filepath.Join(kubeedge, "images", "pause.tar"))
		os.Remove(filepath.Join(kubeedge, "manifests"))
		os.RemoveAll(outside)
		if r := run(t, 2*time.Minute, "reset", "--force"); r.code != 0 {
			t.Errorf("cleaning up: reset --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	if err := os.MkdirAll(filepath.Join(outside, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "pause.tar"), []byte("an archive another account may change"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(kubeedge, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "pause.tar"), filepath.Join(kubeedge, "images", "pause.tar")); err != nil {
		t.Fatal(err)
	}
	// An empty static pod folder an earlier command made makes way for
	// the link.
	if err := os.Remove(filepath.Join(kubeedge, "manifests")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "manifests"), filepath.Join(kubeedge, "manifests")); err != nil {
		t.Fatal(err)
	}

	r := run(t, time.Minute, "service", "install")
	out := r.stdout + r.stderr
	if r.code == 0 {
		t.Fatalf("service install took over a hard link and a symbolic link:\n%s", out)
	}
	for _, want := range []string{
		`C:\etc\kubeedge\images\pause.tar (in C:\etc\kubeedge, `, "is a file with 2 names (hard links)", `fsutil hardlink list "C:\etc\kubeedge\images\pause.tar"`,
		`C:\etc\kubeedge\manifests (in C:\etc\kubeedge, `, "which the service would follow, as SYSTEM, to wherever it points", `cmd /c rmdir "C:\etc\kubeedge\manifests"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("service install's refusal does not say %q:\n%s", want, out)
		}
	}
	if s := run(t, time.Minute, "service", "status"); !strings.Contains(s.stdout, "not installed") {
		t.Errorf("the service was installed: %s%s", s.stdout, s.stderr)
	}

	t.Run("a file another account owns is refused", func(t *testing.T) {
		t.Skip("Wine keeps no file owners or ACLs: every file reads as owned by the Wine user, the elevated account running edgecore, " +
			"so a planted file another account owns cannot be made here; the owner rule is proven over the recording fake " +
			"(internal/protect TestEnforceRefusesEveryPlantedEntryAndNamesIt, internal/join TestJoinRefusesPlantedEntriesBelowExistingFolders)")
	})
}
