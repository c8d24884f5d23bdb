package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// testHost is a fixed machine, so that generated configurations do not depend
// on the one running the tests.
func testHost(goos string) Host {
	return Host{GOOS: goos, Hostname: "LINE3-PC", NodeIP: "10.20.30.40"}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadMissingFileNamesPathAndSample(t *testing.T) {
	for goos, exe := range map[string]string{Windows: "edgecore.exe", Linux: "edgecore"} {
		path := NewLayout(Host{GOOS: goos}).ConfigFile
		_, _, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), testHost(goos))
		var missing *MissingFileError
		if !errors.As(err, &missing) {
			t.Fatalf("%s: got %v, want MissingFileError", goos, err)
		}
		msg := (&MissingFileError{Path: path, GOOS: goos}).Error()
		for _, want := range []string{path, exe + " --minconfig", exe + " --defaultconfig", "--config"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not mention %q", goos, msg, want)
			}
		}
	}
}

func TestLoadAppliesDefaultsUnderTheFile(t *testing.T) {
	p := writeFile(t, "edgecore.yaml", []byte("apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\n"+
		"modules:\n  edgeHub:\n    heartbeat: 42\n"))
	c, _, err := Load(p, testHost(Linux))
	if err != nil {
		t.Fatal(err)
	}
	if c.Modules.EdgeHub.Heartbeat != 42 {
		t.Errorf("heartbeat from the file was not applied: %d", c.Modules.EdgeHub.Heartbeat)
	}
	if c.Modules.Edged.TailoredKubeletConfig == nil || !c.Modules.MetaManager.Enable {
		t.Error("defaults for fields absent from the file were not applied")
	}
}

func TestLoadRefusesUnknownField(t *testing.T) {
	p := writeFile(t, "edgecore.yaml", []byte("kind: EdgeCore\nmodules:\n  edged:\n    windowsPriorityClas: HIGH_PRIORITY_CLASS\n"))
	_, _, err := Load(p, testHost(Windows))
	if err == nil {
		t.Fatal("a misspelt field was accepted")
	}
	for _, want := range []string{p, "windowsPriorityClas", "--defaultconfig"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestLoadValidatesNodeName(t *testing.T) {
	// Windows host names are upper case; a node name must be DNS-1123.
	p := writeFile(t, "edgecore.yaml", []byte("kind: EdgeCore\nmodules:\n  edged:\n    hostnameOverride: LINE3-PC\n"))
	_, _, err := Load(p, testHost(Linux))
	if err == nil || !strings.Contains(err.Error(), "not valid:") || !strings.Contains(err.Error(), "LINE3-PC") ||
		!strings.Contains(err.Error(), "line3-pc") {
		t.Fatalf("an invalid config was accepted: %v", err)
	}
}

func utf16File(s string, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// PowerShell 5.1's ">" writes UTF-16LE with a byte-order mark.
func TestParseAcceptsPowerShellEncodings(t *testing.T) {
	const text = "kind: EdgeCore\nmodules:\n  edgeHub:\n    heartbeat: 7\n"
	for name, data := range map[string][]byte{
		"utf-8":     []byte(text),
		"utf-8 bom": append([]byte{0xEF, 0xBB, 0xBF}, text...),
		"utf-16le":  utf16File(text, false),
		"utf-16be":  utf16File(text, true),
	} {
		c, err := Parse(data, testHost(Linux))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.Modules.EdgeHub.Heartbeat != 7 {
			t.Errorf("%s: heartbeat %d", name, c.Modules.EdgeHub.Heartbeat)
		}
	}
	if _, err := Parse([]byte{0xff, 0xfe, 'a'}, testHost(Linux)); err == nil {
		t.Error("a truncated UTF-16 file was accepted")
	}
	if _, err := Parse([]byte("kind: \xff\xfe\xfd"), testHost(Linux)); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("a file in an unknown encoding gave %v", err)
	}
}

func TestRenderedSamplesParseBack(t *testing.T) {
	for _, goos := range []string{Windows, Linux} {
		for _, kind := range []string{KindMinimal, KindDefault} {
			text, err := Render(kind, testHost(goos))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(text), "# ") {
				t.Errorf("%s/%s sample has no explanatory header", goos, kind)
			}
			p := writeFile(t, "edgecore.yaml", text)
			_, rewrites, err := Load(p, testHost(goos))
			if err != nil {
				t.Errorf("%s/%s sample does not load back: %v", goos, kind, err)
			}
			if len(rewrites) != 0 {
				t.Errorf("%s/%s sample needed rewrites when loaded back: %v", goos, kind, rewrites)
			}
		}
	}
	if _, err := Render("tiny", testHost(Windows)); err == nil {
		t.Error("an unknown sample kind was accepted")
	}
}

// A configuration written by the v1.20-based release has no taskManager
// section (KubeEdge v1.21 brought node jobs to it); loaded onto this
// release's defaults it runs with the module on, as it ran upgrades before,
// while a section the operator wrote is kept as written. Nothing is
// rewritten: the value is the default's.
func TestLoadEnablesTheTaskManagerAnOlderConfigurationLacks(t *testing.T) {
	const head = "apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\nmodules:\n  edged:\n    hostnameOverride: line3-pc\n"
	for name, tc := range map[string]struct {
		text    string
		enabled bool
	}{
		"written for v1.20": {head, true},
		"turned off":        {head + "  taskManager:\n    enable: false\n", false},
		"turned on":         {head + "  taskManager:\n    enable: true\n", true},
	} {
		t.Run(name, func(t *testing.T) {
			c, _, err := Load(writeFile(t, "edgecore.yaml", []byte(tc.text)), testHost(Windows))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Modules.TaskManager != nil && c.Modules.TaskManager.Enable; got != tc.enabled {
				t.Errorf("taskManager enabled %v, want %v", got, tc.enabled)
			}
		})
	}
}

// Decoding a file on top of the defaults leaves the next defaults alone:
// upstream hands out the kubelet's package-level eviction map.
func TestParsingAFileLeavesTheDefaultsAlone(t *testing.T) {
	host := Host{GOOS: Windows, Hostname: "WIN-EDGE-1"}
	before, err := Render(KindDefault, host)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(header+"modules:\n  edged:\n    tailoredKubeletConfig:\n      evictionHard:\n        memory.available: 1234Mi\n"), host); err != nil {
		t.Fatal(err)
	}
	if after, _ := Render(KindDefault, host); string(after) != string(before) {
		t.Errorf("a parsed file changed the defaults:\n%s", after)
	}
}
