package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// testHost is a Windows host as config.CurrentHost would read it, so that
// the commands' defaults are those an operator sees, on any build host.
var testHost = config.Host{GOOS: config.Windows, Hostname: "EDGE-1", NodeIP: "192.0.2.10",
	ProgramFiles: `C:\Program Files`, SystemDrive: "C:"}

// testDeps are testHost's dependencies: this machine's probes, ACLs and
// service manager, and this test binary as the program.
func testDeps() *deps.Dependencies {
	exe, err := os.Executable()
	return deps.ForHost(testHost, exe, err)
}

// testToken has the form of `keadm gettoken`'s output.
var testToken = strings.Repeat("a", 64) + ".eyJh.eyJi.c2ln"

// execute runs the command line args on testHost and returns what it
// printed and its error.
func execute(args ...string) (string, error) {
	cmd := NewCommand(testDeps())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// The flags each command shows in --help: names, short forms, types and
// defaults, as operators and scripts written for keadm know them. The
// defaults come from the host's layout.
func TestFlagNamesAndDefaults(t *testing.T) {
	want := map[string][][4]string{
		"edgecore.exe": {
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"defaultconfig", "", "bool", "false"},
			{"log-file", "", "string", `C:\var\log\kubeedge\edgecore.log`},
			{"memory-limit", "", "size", ""},
			{"minconfig", "", "bool", "false"},
			{"skip-environment-check", "", "bool", "false"},
			{"version", "", "bool", "false"},
		},
		"edgecore.exe cni-config": {
			{"adapter", "", "string", ""},
			{"cluster-cidr", "", "string", ""},
			{"cni-bin-dir", "", "string", `C:\Program Files\containerd\cni\bin`},
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"containerd-config", "", "string", `C:\Program Files\containerd\config.toml`},
			{"dns", "", "stringSlice", "[]"},
			{"dns-search", "", "stringSlice", "[]"},
			{"dry-run", "", "bool", "false"},
			{"force", "", "bool", "false"},
			{"gateway", "", "string", ""},
			{"mode", "", "string", "nat"},
			{"network-name", "", "string", "edgecore-l2bridge"},
			{"output", "o", "string", `C:\Program Files\containerd\cni\conf\0-containerd-nat.conf`},
			{"plugin", "", "string", "sdnbridge"},
			{"service-cidr", "", "string", ""},
			{"subnet", "", "string", ""},
		},
		"edgecore.exe config": {
			{"certport", "s", "string", "10002"},
			{"cloudcore-ipport", "e", "string", ""},
			{"edgenode-name", "i", "string", ""},
			{"force", "", "bool", "false"},
			{"hub-protocol", "", "string", "websocket"},
			{"labels", "l", "stringSlice", "[]"},
			{"offline", "", "bool", "false"},
			{"output", "o", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"remote-runtime-endpoint", "p", "string", ""},
			{"stream", "", "bool", "true"},
			{"token", "t", "string", ""},
		},
		"edgecore.exe join": {
			{"certport", "s", "string", "10002"},
			{"cloudcore-ipport", "e", "string", ""},
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"dry-run", "", "bool", "false"},
			{"edgenode-name", "i", "string", ""},
			{"hub-protocol", "", "string", "websocket"},
			{"labels", "l", "stringSlice", "[]"},
			{"remote-runtime-endpoint", "p", "string", ""},
			{"set", "", "stringArray", "[]"},
			{"stream", "", "bool", "true"},
			{"timeout", "", "duration", "5m0s"},
			{"token", "t", "string", ""},
		},
		"edgecore.exe preflight": {
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"offline", "", "bool", "false"},
		},
		"edgecore.exe reset": {
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"dry-run", "", "bool", "false"},
			{"force", "", "bool", "false"},
			{"keep-data", "", "bool", "false"},
			{"network", "", "bool", "false"},
		},
		"edgecore.exe images import": {
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
			{"endpoint", "", "string", ""},
			{"no-unpack", "", "bool", "false"},
			{"snapshotter", "", "string", "windows"},
			{"timeout", "", "duration", "30m0s"},
		},
		"edgecore.exe rollback": {
			{"timeout", "", "duration", "3m0s"},
			{"to", "", "string", ""},
		},
		"edgecore.exe service install": {
			{"config", "", "string", `C:\etc\kubeedge\config\edgecore.yaml`},
		},
		"edgecore.exe upgrade confirm": {
			{"job", "", "string", ""},
			{"timeout", "", "duration", "30s"},
		},
		"edgecore.exe takeover": {
			{"dry-run", "", "bool", "false"},
			{"service", "", "string", "edgecore"},
			{"timeout", "", "duration", "3m0s"},
		},
		"edgecore.exe upgrade": {
			{"allow-downgrade", "", "bool", "false"},
			{"journal", "", "string", ""},
			{"package", "", "string", ""},
			{"resume", "", "bool", "false"},
			{"sha256", "", "string", ""},
			{"timeout", "", "duration", "3m0s"},
		},
	}
	root := NewCommand(testDeps())
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if flags, ok := want[c.CommandPath()]; ok {
			seen[c.CommandPath()] = true
			for _, w := range flags {
				f := c.LocalFlags().Lookup(w[0])
				if f == nil {
					t.Errorf("%s has no --%s", c.CommandPath(), w[0])
					continue
				}
				if got := [4]string{f.Name, f.Shorthand, f.Value.Type(), f.DefValue}; got != w {
					t.Errorf("%s --%s is %q, want %q", c.CommandPath(), w[0], got, w)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	for path := range want {
		if !seen[path] {
			t.Errorf("no command %q", path)
		}
	}
	up, _, _ := root.Find([]string{"upgrade"})
	if f := up.Flags().Lookup("journal"); f == nil || !f.Hidden {
		t.Error("upgrade --journal is not hidden: it is the NodeUpgradeJob executor's, not the operator's")
	}
}

// join's flags land in its options: the refusal names each flag given,
// with its value and the fix, as the plan's first step, and nothing runs.
func TestJoinRefusesFlagsBeforeRunning(t *testing.T) {
	out, err := execute("join", "-e", "10.0.0.1:10000", "-t", testToken, "--timeout", "0s", "--config", "edgecore.yaml", "--set", "maxPods")
	var se *steps.StepError
	if !errors.As(err, &se) || se.Index != 1 {
		t.Fatalf("error %v, want a failure of step 1", err)
	}
	for _, w := range []string{
		`--timeout: Invalid value: "0s": give how long to wait`,
		`--config: Invalid value: "edgecore.yaml": give an absolute path`,
		`--set: Invalid value: "maxPods": expected path=value`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
	if out != "" {
		t.Errorf("join printed %q before refusing", out)
	}
}

// config and join share one render: the header names the node and the
// cloud, and keadm's flags reach the configuration.
func TestConfigWritesTheJoinFlags(t *testing.T) {
	out, err := execute("config", "--offline", "-e", "10.0.0.1:10000", "-t", testToken, "-l", "site=plant-1", "--stream=false", "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "# edgecore configuration for node edge-1, joining cloudcore at 10.0.0.1:10000.\n"+
		"# The token is removed from this file once the node certificates are issued.\n") {
		t.Errorf("header:\n%s", out)
	}
	for _, w := range []string{"site: plant-1", "token: " + testToken, "server: 10.0.0.1:10000"} {
		if !strings.Contains(out, w) {
			t.Errorf("configuration lacks %q", w)
		}
	}
	if !strings.Contains(out, "edgeStream:\n    enable: false\n") {
		t.Errorf("--stream=false did not turn edgeStream off:\n%s", out)
	}
}

// reset --network adds the removal of cni-config's network to the plan.
func TestResetNetworkFlag(t *testing.T) {
	steps := func(args ...string) string {
		out, err := execute(append([]string{"reset", "--dry-run", "--config", `C:\etc\kubeedge\config\none.yaml`}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	without, with := steps(), steps("--network")
	if !strings.Contains(without, "[9/9]") || !strings.Contains(with, "[10/10]") {
		t.Errorf("--network did not add a step:\nwithout:\n%s\nwith:\n%s", without, with)
	}
}

// cni-config's flags reach its options, and Validate names the flag.
func TestCNIConfigFlags(t *testing.T) {
	_, err := execute("cni-config", "--mode", "bogus", "--dns", "10.96.0.10", "--dry-run")
	if err == nil || !strings.Contains(err.Error(), "--mode bogus: is not a pod network mode; use --mode nat") {
		t.Errorf("--mode bogus: %v", err)
	}
	out, err := execute("cni-config", "--subnet", "10.244.2.0/24", "--gateway", "10.244.2.9", "--dns", "10.96.0.10", "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"subnet": "10.244.2.0/24"`, `"10.96.0.10"`, `"gw": "10.244.2.9"`} {
		if !strings.Contains(out, w) {
			t.Errorf("configuration lacks %s:\n%s", w, out)
		}
	}
}

// service install's flag lands in its options, checked before the service
// manager is asked anything.
func TestServiceInstallRefusesAnEmptyConfig(t *testing.T) {
	_, err := execute("service", "install", "--config", "")
	if err == nil || !strings.Contains(err.Error(), "--config is empty") {
		t.Errorf("service install --config \"\": %v", err)
	}
}

// reset refuses an empty --config before it prints or removes anything.
func TestResetRefusesAnEmptyConfig(t *testing.T) {
	out, err := execute("reset", "--dry-run", "--config", "")
	if err == nil || !strings.Contains(err.Error(), "--config: Required value") || strings.Contains(out, "remove") {
		t.Errorf("reset --config \"\": printed %q, error %v", out, err)
	}
}

// images import names what is missing before it dials containerd.
func TestImagesImportValidates(t *testing.T) {
	_, err := execute("images", "import", "--endpoint", "npipe://./pipe/containerd-containerd", "--timeout", "0s")
	if err == nil || !strings.Contains(err.Error(), "no archive given") || !strings.Contains(err.Error(), "--timeout 0s") {
		t.Errorf("got %v, want the missing archive and the bad --timeout named", err)
	}
	_, err = execute("images", "import", "--endpoint", "npipe://./pipe/containerd-containerd", "does-not-exist.tar")
	if err == nil || !strings.Contains(err.Error(), "image archive does-not-exist.tar") {
		t.Errorf("got %v, want the missing archive named", err)
	}
}
