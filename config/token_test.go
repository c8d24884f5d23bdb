package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRemoveTokenKeepsEverythingElse(t *testing.T) {
	const original = `# edge node on line 3
apiVersion: edgecore.config.kubeedge.io/v1alpha2
kind: EdgeCore
modules:
  edgeHub:
    # from keadm gettoken
    token: 0123abcd.eyJhbGciOiJIUzI1NiJ9.e30.sig
    heartbeat: 15
  edged:
    hostnameOverride: line3-pc
`
	p := writeFile(t, "edgecore.yaml", []byte(original))
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	var made []string
	create := func(tmp string) (*os.File, error) {
		made = append(made, filepath.Dir(tmp))
		return os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if err := RemoveToken(p, create); err != nil {
		t.Fatal(err)
	}
	// The file renamed over the configuration is the caller's: on
	// Windows, one only SYSTEM and Administrators may open.
	if len(made) != 1 || made[0] != filepath.Dir(p) {
		t.Errorf("RemoveToken made its file %v, want one beside %s by the caller's create", made, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if strings.Contains(got, "0123abcd") {
		t.Fatalf("token still on disk:\n%s", got)
	}
	for _, keep := range []string{"# edge node on line 3", "# from keadm gettoken", `token: ""`, "heartbeat: 15", "hostnameOverride: line3-pc"} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %q:\n%s", keep, got)
		}
	}
	c, err := Parse(data, testHost(Linux))
	if err != nil || c.Modules.EdgeHub.Token != "" || c.Modules.Edged.HostnameOverride != "line3-pc" {
		t.Fatalf("rewritten file does not parse as before: %v", err)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o640 {
		t.Errorf("file mode changed to %v", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(strings.TrimSuffix(p, "edgecore.yaml"))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRemoveTokenWithoutTokenChangesNothing(t *testing.T) {
	const original = "kind: EdgeCore  # odd spacing kept\n"
	p := writeFile(t, "edgecore.yaml", []byte(original))
	if err := RemoveToken(p, createMode(0o600)); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != original {
		t.Fatalf("file without a token was rewritten:\n%s", data)
	}
}
