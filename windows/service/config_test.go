package service

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

const testExe = `C:\Program Files\edgecore\edgecore.exe`

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
	if err := c.Validate(); err != nil {
		t.Fatalf("the default service config does not validate: %v", err)
	}
	if c.Name != "edgecore" {
		t.Errorf("Name = %q, want edgecore", c.Name)
	}
	if c.StartType != StartAutomatic {
		t.Errorf("StartType = %v, want automatic so the node comes back after a reboot", c.StartType)
	}
	if c.DisplayName == "" || c.Description == "" {
		t.Errorf("DisplayName %q and Description %q must both be set", c.DisplayName, c.Description)
	}
	// At once after a crash, then backing off.
	want := []time.Duration{0, 5 * time.Second, 30 * time.Second, 60 * time.Second}
	if len(c.RestartDelays) != len(want) {
		t.Fatalf("RestartDelays = %v, want %v", c.RestartDelays, want)
	}
	for i := range want {
		if c.RestartDelays[i] != want[i] {
			t.Errorf("RestartDelays = %v, want %v", c.RestartDelays, want)
		}
		if i > 0 && c.RestartDelays[i] < c.RestartDelays[i-1] {
			t.Errorf("RestartDelays %v must not get shorter", c.RestartDelays)
		}
	}
	if got := c.ResetPeriodSeconds(); got != 86400 {
		t.Errorf("ResetPeriodSeconds = %d, want 86400", got)
	}
	if !c.RestartOnErrorExit {
		t.Error("RestartOnErrorExit is off: a service that stops with an error code would not be restarted")
	}
	if c.RuntimeService != "containerd" {
		t.Errorf("RuntimeService = %q, want containerd, so that a boot starts the runtime first", c.RuntimeService)
	}
	// A host shutdown must wait for the whole graceful stop, which the
	// service itself bounds by StopTimeout, and a little longer for the
	// stopped report; Windows' default of 10 s would cut it short.
	if c.PreShutdownTimeout <= StopTimeout || c.PreShutdownTimeout > StopTimeout+10*time.Second {
		t.Errorf("PreShutdownTimeout = %v, want a little more than StopTimeout %v", c.PreShutdownTimeout, StopTimeout)
	}
	line, err := c.CommandLine()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"C:\Program Files\edgecore\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`; line != want {
		t.Errorf("CommandLine = %s, want %s", line, want)
	}
}

// A host shutdown waits for the pods' grace periods, the kubelet's work
// around them, and the bounded stop of edgecore with its report: exactly
// what the lifecycle may take, so that Windows never shuts down in the
// middle of it.
func TestPreShutdownTimeoutCoversTheNodeShutdown(t *testing.T) {
	for grace, want := range map[time.Duration]time.Duration{
		0:                35 * time.Second,
		30 * time.Second: 70 * time.Second,
		2 * time.Minute:  160 * time.Second,
	} {
		c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, grace)
		if c.PreShutdownTimeout != want {
			t.Errorf("with %v of node shutdown PreShutdownTimeout = %v, want %v", grace, c.PreShutdownTimeout, want)
		}
		lifecycleBound := StopTimeout
		if grace > 0 {
			lifecycleBound += grace + NodeShutdownSlack
		}
		if c.PreShutdownTimeout < lifecycleBound+reportMargin {
			t.Errorf("with %v of node shutdown Windows waits %v, less than the service's own bound %v and its report", grace, c.PreShutdownTimeout, lifecycleBound)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("with %v of node shutdown: %v", grace, err)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	base := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
	for _, tc := range []struct {
		name      string
		change    func(*Config)
		wantInErr string
	}{
		{"empty name", func(c *Config) { c.Name = "" }, "service name is empty"},
		{"slash in name", func(c *Config) { c.Name = `edge\core` }, "backslash"},
		{"control character in name", func(c *Config) { c.Name = "edge\ncore" }, "control character"},
		{"long name", func(c *Config) { c.Name = strings.Repeat("e", 257) }, "longer than 256"},
		{"long display name", func(c *Config) { c.DisplayName = strings.Repeat("e", 257) }, "DisplayName"},
		{"NUL in description", func(c *Config) { c.Description = "a\x00b" }, "Description"},
		{"boot start", func(c *Config) { c.StartType = StartBoot }, "StartType boot"},
		{"unknown start", func(c *Config) { c.StartType = 9 }, "StartType unknown (9)"},
		{"relative executable", func(c *Config) { c.Executable = "edgecore.exe" }, "not absolute"},
		{"no restart delays", func(c *Config) { c.RestartDelays = nil }, "RestartDelays is empty"},
		{"zero last delay", func(c *Config) { c.RestartDelays = []time.Duration{5 * time.Second, 0} }, "RestartDelays[1] is 0s; the last delay repeats"},
		{"negative delay", func(c *Config) { c.RestartDelays = []time.Duration{-time.Second, time.Minute} }, "RestartDelays[0] is -1s"},
		{"delay over the 32-bit millisecond field", func(c *Config) { c.RestartDelays = []time.Duration{50 * 24 * time.Hour} }, "RestartDelays[0]"},
		{"no reset period", func(c *Config) { c.ResetFailuresAfter = 0 }, "ResetFailuresAfter"},
		{"runtime service with a slash", func(c *Config) { c.RuntimeService = "containerd/x" }, "RuntimeService: service name"},
		{"depending on itself", func(c *Config) { c.RuntimeService = "EdgeCore" }, "cannot depend on itself"},
		{"pre-shutdown shorter than the graceful stop", func(c *Config) { c.PreShutdownTimeout = 10 * time.Second }, "PreShutdownTimeout is 10s"},
		{"pre-shutdown over the 32-bit millisecond field", func(c *Config) { c.PreShutdownTimeout = 50 * 24 * time.Hour }, "lower the node's shutdown grace periods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			c.Args = append([]string(nil), base.Args...)
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.wantInErr)
			}
		})
	}
}

func TestStartTypeValuesAreWindows(t *testing.T) {
	// The service manager stores these numbers; Query converts them back
	// without a table.
	for st, want := range map[StartType]uint32{StartBoot: 0, StartSystem: 1, StartAutomatic: 2, StartManual: 3, StartDisabled: 4} {
		if uint32(st) != want {
			t.Errorf("%v = %d, want %d", st, uint32(st), want)
		}
	}
}

func TestValidateAcceptsNoRuntimeAndWindowsDefaultPreShutdown(t *testing.T) {
	c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
	c.RuntimeService = ""
	c.PreShutdownTimeout = 0
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v; no runtime dependency and Windows' pre-shutdown default are valid", err)
	}
}

func TestDependsOnTheRuntimeWhenInstalled(t *testing.T) {
	c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
	var asked []string
	deps, warnings, err := c.dependencies(func(name string) (bool, error) {
		asked = append(asked, name)
		return true, nil
	})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("dependencies = %v, %v, %v", deps, warnings, err)
	}
	if len(deps) != 1 || deps[0] != "containerd" || len(asked) != 1 || asked[0] != "containerd" {
		t.Errorf("depends on %v after asking about %v, want containerd", deps, asked)
	}
}

func TestWarnsWhenTheRuntimeIsNotInstalled(t *testing.T) {
	c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
	deps, warnings, err := c.dependencies(func(string) (bool, error) { return false, nil })
	if err != nil || len(deps) != 0 || len(warnings) != 1 {
		t.Fatalf("dependencies = %v, %v, %v; want no dependency and one warning", deps, warnings, err)
	}
	for _, want := range []string{
		`"containerd" is not installed`,
		"edgecore may start before the container runtime and retries",
		"`edgecore.exe service uninstall` and `edgecore.exe service install` again",
		"`sc.exe config edgecore depend= containerd`",
	} {
		if !strings.Contains(warnings[0], want) {
			t.Errorf("warning %q lacks %q", warnings[0], want)
		}
	}
}

func TestDependenciesNameAFailedLookUp(t *testing.T) {
	c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
	denied := errors.New("access is denied")
	_, _, err := c.dependencies(func(string) (bool, error) { return false, denied })
	if !errors.Is(err, denied) || !strings.Contains(err.Error(), `"containerd"`) {
		t.Errorf("dependencies = %v, want the error naming the runtime's service", err)
	}
	c.RuntimeService = ""
	deps, warnings, err := c.dependencies(func(string) (bool, error) {
		t.Error("asked the service manager although no runtime is configured")
		return false, nil
	})
	if deps != nil || warnings != nil || err != nil {
		t.Errorf("no runtime: dependencies = %v, %v, %v", deps, warnings, err)
	}
}

func TestStringBlock(t *testing.T) {
	got := string(utf16.Decode(stringBlock([]string{"containerd", "RpcSs"})))
	if want := "containerd\x00RpcSs\x00\x00"; got != want {
		t.Errorf("stringBlock = %q, want %q", got, want)
	}
}

func TestCheckPreShutdownNamesTheFieldAndTheFix(t *testing.T) {
	const field = "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"
	if err := CheckPreShutdown("edgecore", 70*time.Second, 30*time.Second, field); err != nil {
		t.Errorf("70s for 30s of node shutdown: %v", err)
	}
	if err := CheckPreShutdown("edgecore", 35*time.Second, 0, ""); err != nil {
		t.Errorf("35s without node shutdown: %v", err)
	}
	err := CheckPreShutdown("edgecore", 35*time.Second, 30*time.Second, field)
	var pe *PreShutdownError
	if !errors.As(err, &pe) || pe.Need() != 70*time.Second {
		t.Fatalf("35s for 30s of node shutdown = %v, want a PreShutdownError needing 70s", err)
	}
	for _, want := range []string{field + " asks for 30s", "waits only 35s for the edgecore service", "needs 1m10s",
		"`edgecore.exe service uninstall`, then `edgecore.exe service install`", "or lower " + field} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	err = CheckPreShutdown("edgecore", 10*time.Second, 0, "")
	if err == nil || !strings.Contains(err.Error(), "waits only 10s for the edgecore service, which needs 35s") || strings.Contains(err.Error(), "or lower") {
		t.Errorf("Windows' 10s default without node shutdown = %v", err)
	}
}
