package config

import (
	"strings"
	"testing"
)

// keadmFile is the configuration upstream's keadm v1.23 leaves on a
// Windows node after a join: every field written out (WriteTo marshals
// the whole default configuration, on Windows with windowsService: true),
// the join token kept in modules.edgeHub.token, and the node's name.
func keadmFile(t *testing.T, host Host) []byte {
	t.Helper()
	text, err := Render(KindDefault, host)
	if err != nil {
		t.Fatal(err)
	}
	// windowsService: false is left out of the sample (omitempty); keadm
	// v1.23 writes the Windows default, true, after hostnameOverride's
	// section neighbours.
	s := string(text)
	if i := strings.Index(s, "    hostnameOverride: "); i >= 0 {
		s = s[:i] + "    windowsService: true\n" + s[i:]
	}
	s = strings.Replace(s, "    token: \"\"\n", "    token: 0123456789abcdef.eyJhbGciOiJIUzI1NiJ9.secret-part\n", 1)
	if !strings.Contains(s, "windowsService: true") || !strings.Contains(s, "secret-part") {
		t.Fatalf("the sample changed shape; the keadm file could not be made from it:\n%s", text)
	}
	return []byte("# written by keadm join\n" + s)
}

func TestAdoptKeadmConfiguration(t *testing.T) {
	host := Host{GOOS: Windows, Hostname: "WIN-EDGE-1", SystemDrive: "C:", ProgramFiles: `C:\Program Files`}
	raw := keadmFile(t, host)
	if _, err := Parse(raw, host); err != nil {
		t.Fatalf("the keadm file does not even parse: %v", err)
	}
	if _, _, err := LoadBytes(raw, "keadm's file", host); err == nil || !strings.Contains(err.Error(), "windowsService") {
		t.Fatalf("edgecore would load keadm's file as it is (err %v); the takeover would have nothing to do", err)
	}

	a, err := Adopt(raw, host)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"modules.edged.windowsService": "false", "modules.edgeHub.token": `""`}
	if len(a.Changes) != len(want) {
		t.Errorf("changes = %+v, want the fields %v only", a.Changes, want)
	}
	for _, c := range a.Changes {
		if want[c.Field] != c.To {
			t.Errorf("change %+v not expected", c)
		}
		if strings.Contains(c.From, "secret-part") {
			t.Errorf("the change of %s shows the token's secret: %q", c.Field, c.From)
		}
	}
	if a.Config.Modules.Edged.WindowsService || a.Config.Modules.EdgeHub.Token != "" {
		t.Errorf("the adopted configuration still has windowsService %v, token %q", a.Config.Modules.Edged.WindowsService, a.Config.Modules.EdgeHub.Token)
	}
	if a.Config.Modules.Edged.HostnameOverride != "win-edge-1" {
		t.Errorf("node name = %q, want keadm's win-edge-1", a.Config.Modules.Edged.HostnameOverride)
	}
	out := string(a.Data)
	if !strings.HasPrefix(out, "# written by keadm join\n") {
		t.Errorf("the operator's comment was lost:\n%s", out)
	}
	// Only the two values differ, line by line.
	before, after := strings.Split(string(raw), "\n"), strings.Split(out, "\n")
	if len(before) != len(after) {
		t.Fatalf("the file went from %d to %d lines: more than two values changed", len(before), len(after))
	}
	var changed []string
	for i := range before {
		if before[i] != after[i] {
			changed = append(changed, strings.TrimSpace(after[i]))
		}
	}
	if strings.Join(changed, "|") != `token: ""|windowsService: false` && strings.Join(changed, "|") != `windowsService: false|token: ""` {
		t.Errorf("changed lines = %q", changed)
	}
	// What it writes loads as edgecore loads a file.
	if _, _, err := LoadBytes(a.Data, "adopted", host); err != nil {
		t.Errorf("the adopted file does not load: %v", err)
	}
	// Adopting it again changes nothing.
	again, err := Adopt(a.Data, host)
	if err != nil || len(again.Changes) != 0 || string(again.Data) != out {
		t.Errorf("adopting an adopted file: changes %+v, err %v", again.Changes, err)
	}
}

func TestAdoptRefusesWhatItCannotKeep(t *testing.T) {
	host := Host{GOOS: Windows, Hostname: "WIN-EDGE-1", SystemDrive: "C:", ProgramFiles: `C:\Program Files`}
	for _, tc := range []struct{ name, yaml, want string }{
		{"not a configuration", "hello: world\n", "no modules section"},
		{"a Linux-only setting", header + "modules:\n  edged:\n    hostnameOverride: n1\n    windowsService: true\n    tailoredKubeletConfig:\n      cgroupsPerQOS: true\n", "cgroupsPerQOS"},
		{"no node name", header + "modules:\n  edged:\n    hostnameOverride: \"\"\n", "hostnameOverride"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Adopt([]byte(tc.yaml), host)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Adopt = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
