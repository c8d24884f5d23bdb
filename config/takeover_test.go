package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The configurations upstream's keadm v1.23 leaves on a Windows node, as
// upstream's own code in this module graph writes them
// (test/keadmnode; `make keadm-fixture` writes them again, and the
// takeover e2e checks they are what it writes): join.yaml as keadm's
// join writes it, with the join token; node.yaml as upstream's edgecore
// leaves it once the node's certificates are issued, the token blanked.
const keadmFixtures = "../test/keadmnode/testdata"

// The fixtures' token: of the right form, issued by no cloud.
const fixtureSecret = "c2lnbmF0dXJl"

func keadmFixture(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(keadmFixtures, name))
	if err != nil {
		t.Fatalf("%v: run make keadm-fixture", err)
	}
	// That they are keadm's Windows defaults, not something else.
	for _, want := range []string{"windowsService: true", "podSandboxImage: kubeedge/pause:3.6", `dataSource: C:\var\lib\kubeedge\edgecore.db`,
		"hostnameOverride: win-edge-1", "edgecoreVersion: v1.23"} {
		if !strings.Contains(string(raw), want) {
			t.Fatalf("%s lacks %q: it is not the configuration keadm v1.23 writes for Windows", name, want)
		}
	}
	return raw
}

var keadmHost = Host{GOOS: Windows, Hostname: "WIN-EDGE-1", SystemDrive: "C:", ProgramFiles: `C:\Program Files`}

// changedLines are the lines of after that differ from before, which
// must have as many.
func changedLines(t *testing.T, before, after []byte) []string {
	t.Helper()
	b, a := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	if len(b) != len(a) {
		t.Fatalf("the file went from %d to %d lines: more than values changed", len(b), len(a))
	}
	var changed []string
	for i := range b {
		if b[i] != a[i] {
			changed = append(changed, strings.TrimSpace(a[i]))
		}
	}
	return changed
}

// A node keadm joined, as its edgecore leaves it: only windowsService
// changes; upstream's Windows pause image and every other default load as
// they are.
func TestAdoptKeadmNode(t *testing.T) {
	raw := keadmFixture(t, "node.yaml")
	if _, _, err := LoadBytes(raw, "keadm's file", keadmHost); err == nil || !strings.Contains(err.Error(), "windowsService") {
		t.Fatalf("edgecore would load keadm's file as it is (err %v); the takeover would have nothing to do", err)
	}
	a, err := Adopt(raw, keadmHost, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Changes) != 1 || a.Changes[0].Field != "modules.edged.windowsService" || a.Changes[0].To != "false" {
		t.Errorf("changes = %+v, want windowsService only", a.Changes)
	}
	if got := changedLines(t, raw, a.Data); strings.Join(got, "|") != "windowsService: false" {
		t.Errorf("changed lines = %q", got)
	}
	c := a.Config
	if c.Modules.Edged.WindowsService || c.Modules.Edged.HostnameOverride != "win-edge-1" || c.Modules.Edged.PodSandboxImage != "kubeedge/pause:3.6" ||
		c.DataBase.DataSource != `C:\var\lib\kubeedge\edgecore.db` || c.Modules.EdgeHub.TLSPrivateKeyFile != `C:\etc\kubeedge\certs\server.key` {
		t.Errorf("the adopted configuration: windowsService %v, node %q, pause %q, database %q, key %q", c.Modules.Edged.WindowsService,
			c.Modules.Edged.HostnameOverride, c.Modules.Edged.PodSandboxImage, c.DataBase.DataSource, c.Modules.EdgeHub.TLSPrivateKeyFile)
	}
	// What it writes loads as edgecore loads a file, and adopting it
	// again changes nothing.
	if _, _, err := LoadBytes(a.Data, "adopted", keadmHost); err != nil {
		t.Errorf("the adopted file does not load: %v", err)
	}
	again, err := Adopt(a.Data, keadmHost, "")
	if err != nil || len(again.Changes) != 0 || string(again.Data) != string(a.Data) {
		t.Errorf("adopting an adopted file: changes %+v, err %v", again.Changes, err)
	}
}

// A join that never got to the certificates leaves the token: it is
// blanked, and never shown.
func TestAdoptKeadmJoinBlanksTheToken(t *testing.T) {
	raw := keadmFixture(t, "join.yaml")
	a, err := Adopt([]byte("# written by keadm join\n"+string(raw)), keadmHost, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"modules.edged.windowsService": "false", "modules.edgeHub.token": `""`}
	if len(a.Changes) != len(want) {
		t.Errorf("changes = %+v, want the fields %v only", a.Changes, want)
	}
	for _, c := range a.Changes {
		if want[c.Field] != c.To || strings.Contains(c.From, fixtureSecret) {
			t.Errorf("change %+v", c)
		}
	}
	if !strings.HasPrefix(string(a.Data), "# written by keadm join\n") || strings.Contains(string(a.Data), fixtureSecret) || a.Config.Modules.EdgeHub.Token != "" {
		t.Errorf("the file written keeps the token or lost the comment:\n%s", a.Data)
	}
}

// takeover --token: the new token goes into the file (the node applies
// for a new certificate with it), shown redacted.
func TestAdoptWithANewToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjJ9.bmV3LXNlY3JldA"
	for _, name := range []string{"node.yaml", "join.yaml"} {
		a, err := Adopt(keadmFixture(t, name), keadmHost, token)
		if err != nil {
			t.Fatal(err)
		}
		var tok *Rewrite
		for i := range a.Changes {
			if a.Changes[i].Field == "modules.edgeHub.token" {
				tok = &a.Changes[i]
			}
		}
		if tok == nil || strings.Contains(tok.To, "bmV3LXNlY3JldA") || strings.Contains(tok.From, fixtureSecret) || !strings.HasSuffix(tok.To, "<redacted>") {
			t.Errorf("%s: the token's change %+v", name, tok)
		}
		if a.Config.Modules.EdgeHub.Token != token || !strings.Contains(string(a.Data), "token: "+token+"\n") {
			t.Errorf("%s: the file does not carry the new token", name)
		}
	}
	if _, err := Adopt([]byte(header+"modules:\n  edged:\n    hostnameOverride: n1\n"), keadmHost, token); err == nil || !strings.Contains(err.Error(), "modules.edgeHub.token") {
		t.Errorf("a file without a token field: %v", err)
	}
}

func TestAdoptRefusesWhatItCannotKeep(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"not a configuration", "hello: world\n", "no modules section"},
		{"a Linux-only setting", header + "modules:\n  edged:\n    hostnameOverride: n1\n    windowsService: true\n    tailoredKubeletConfig:\n      cgroupsPerQOS: true\n", "cgroupsPerQOS"},
		{"no node name", header + "modules:\n  edged:\n    hostnameOverride: \"\"\n", "hostnameOverride"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Adopt([]byte(tc.yaml), keadmHost, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Adopt = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
