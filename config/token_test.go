package config

import (
	"os"
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
	if err := RemoveToken(p); err != nil {
		t.Fatal(err)
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
	if err := RemoveToken(p); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != original {
		t.Fatalf("file without a token was rewritten:\n%s", data)
	}
}
