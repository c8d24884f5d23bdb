package configfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/protect/protecttest"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// testToken has the shape of keadm gettoken's output.
const testToken = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e.eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJlLW9mLXRoZS1qb2luLXRva2Vu"

// depsOn is host's dependencies.
func depsOn(host config.Host) *deps.Dependencies {
	return &deps.Dependencies{Host: host, Layout: config.NewLayout(host)}
}

func configOptions(host config.Host, output string) Options {
	o := NewOptions(depsOn(host))
	o.CloudCoreIPPort, o.Token, o.Offline, o.Output = "10.0.0.1:10000", testToken, true, output
	return *o
}

func TestConfigOptionsValidateNamesAnEmptyOutput(t *testing.T) {
	o := configOptions(config.Host{GOOS: config.Windows}, "")
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--output") {
		t.Errorf("Validate with no output: %v", err)
	}
	if err := NewOptions(depsOn(config.Host{GOOS: config.Windows})).Validate(); err != nil {
		t.Errorf("the default output is refused: %v", err)
	}
}

// Offline, the node IP is the one the host was read with: no route is
// looked up towards a cloud the host may not reach yet.
func TestConfigOptionsCompleteOfflineKeepsTheHostsNodeIP(t *testing.T) {
	o := configOptions(config.Host{GOOS: config.Windows, NodeIP: "192.0.2.7"}, "-")
	o.Complete(depsOn(config.Host{GOOS: config.Windows, NodeIP: "192.0.2.7"}))
	if o.Host.NodeIP != "192.0.2.7" {
		t.Errorf("node IP %q", o.Host.NodeIP)
	}
}

func TestWriteConfigToStandardOutputWritesNoFile(t *testing.T) {
	dir := t.TempDir()
	o := configOptions(config.Host{GOOS: config.Linux, Hostname: "edge-1", NodeIP: "192.0.2.7"}, "-")
	var out bytes.Buffer
	if err := Write(&out, o, nil, protect.Host{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "10.0.0.1:10000") || !strings.Contains(out.String(), "hostnameOverride: edge-1") {
		t.Errorf("output:\n%s", out.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
}

func TestWriteConfigWritesOnceAndKeepsAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edgecore.yaml")
	o := configOptions(config.Host{GOOS: config.Linux, Hostname: "edge-1", NodeIP: "192.0.2.7"}, path)
	var out bytes.Buffer
	if err := Write(&out, o, nil, protect.Host{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Wrote "+path+" for node edge-1.") {
		t.Errorf("output %q", out.String())
	}
	first, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(first, []byte(testToken)) {
		t.Fatalf("file: %v", err)
	}
	if err := Write(&out, o, nil, protect.Host{}); err == nil {
		t.Error("an existing configuration was replaced without --force")
	}
	o.Overwrite = true
	if err := Write(&out, o, nil, protect.Host{}); err != nil {
		t.Errorf("with --force: %v", err)
	}
}

// On Windows a file written outside the node's directories still holds the
// token, so it is restricted too; one inside them is covered by its
// directory.
func TestConfigTargetsAddTheFileOutsideTheNodesDirectories(t *testing.T) {
	host := config.Host{GOOS: config.Windows, Hostname: "edge-1", NodeIP: "192.0.2.7"}
	c, _, err := config.JoinConfig(configOptions(host, "-").JoinOptions, host, nil)
	if err != nil {
		t.Fatal(err)
	}
	inside, err := configTargets(c, host, config.NewLayout(host).ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	outside, err := configTargets(c, host, `D:\setup\edgecore.yaml`)
	if err != nil {
		t.Fatal(err)
	}
	if len(outside) != len(inside)+1 || outside[len(outside)-1].Path != `D:\setup\edgecore.yaml` || !outside[len(outside)-1].Restrict {
		t.Errorf("targets for a file outside: %+v (inside: %d)", outside[len(outside)-1], len(inside))
	}
}

// On Windows the node's directories are restricted before the token is
// written, so a file written into one is restricted from its first byte;
// a file outside them is restricted as soon as it is written.
func TestWriteConfigRestrictsBeforeWritingTheToken(t *testing.T) {
	host := config.Host{GOOS: config.Windows, Hostname: "edge-1", NodeIP: "192.0.2.7"}
	output := filepath.Join(t.TempDir(), "edgecore.yaml")
	sddl := map[string]string{`C:\etc\kubeedge`: "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"}
	var calls []string
	acls := protect.Host{
		Exists: func(path string) (bool, error) {
			if _, ok := sddl[path]; ok {
				return true, nil
			}
			_, err := os.Lstat(path)
			return err == nil && strings.HasPrefix(path, "/"), nil
		},
		Read: func(path string) (acl.Security, error) {
			s, ok := sddl[path]
			if !ok {
				// As the temporary directory's ACL would be: Users read.
				s = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
			}
			return acl.ParseSDDL(s)
		},
		List: protecttest.List(func() map[string]string { return sddl }),
		Restrict: func(root string, _ func(string) bool) error {
			_, err := os.Stat(output)
			calls = append(calls, fmt.Sprintf("restrict %s (file written: %v)", root, err == nil))
			sddl[root] = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
			return nil
		},
		Mkdir: func(path, sddl string) error { return fmt.Errorf("mkdir %s: the output's directory exists", path) },
		// The file that receives the token is created with its own
		// descriptor, before a byte of it is written.
		CreateFile: func(path string) (*os.File, error) {
			calls = append(calls, "create with the administrators-only descriptor "+filepath.Base(filepath.Dir(path))+" (file written: "+fmt.Sprint(fileExists(output))+")")
			return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		},
	}
	if err := Write(&bytes.Buffer{}, configOptions(host, output), nil, acls); err != nil {
		t.Fatal(err)
	}
	want := []string{`restrict C:\etc\kubeedge (file written: false)`,
		"create with the administrators-only descriptor " + filepath.Base(filepath.Dir(output)) + " (file written: false)",
		"restrict " + output + " (file written: true)"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("did\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
