package service

import (
	"strings"
	"testing"
	"time"
)

const testExe = `C:\Program Files\edgecore\edgecore.exe`

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`)
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
	want := []time.Duration{5 * time.Second, 30 * time.Second, 60 * time.Second}
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
	line, err := c.CommandLine()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"C:\Program Files\edgecore\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`; line != want {
		t.Errorf("CommandLine = %s, want %s", line, want)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	base := DefaultConfig(testExe, `C:\etc\kubeedge\config\edgecore.yaml`)
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
		{"zero delay", func(c *Config) { c.RestartDelays = []time.Duration{5 * time.Second, 0} }, "RestartDelays[1] is 0s"},
		{"delay over the 32-bit millisecond field", func(c *Config) { c.RestartDelays = []time.Duration{50 * 24 * time.Hour} }, "RestartDelays[0]"},
		{"no reset period", func(c *Config) { c.ResetFailuresAfter = 0 }, "ResetFailuresAfter"},
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
