package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The commands print the result line last and end with its exit code;
// these refusals happen before the host is looked at.
func TestUpgradeAndRollbackCommandsRefuseBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		line string
	}{
		{[]string{"upgrade"}, `result=refused action=upgrade reason="upgrade options: not valid: - --package: Required value`},
		{[]string{"upgrade", "--package", "x.zip", "--timeout", "0s"}, `--timeout: Invalid value: \"0s\"`},
		{[]string{"upgrade", "--package", "x.zip", "--sha256", "abc"}, `--sha256: Invalid value: \"abc\"`},
		{[]string{"rollback", "--timeout", "-1s"}, `result=refused action=rollback reason="rollback options: not valid: - --timeout: Invalid value`},
	} {
		cmd := NewCommand(testDeps())
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(tc.args)
		err := cmd.Execute()
		var exit *ExitError
		if !errors.As(err, &exit) || exit.Code != 1 {
			t.Errorf("%v: error %v, want exit code 1", tc.args, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, tc.line) || !strings.HasPrefix(last, "result=refused") {
			t.Errorf("%v: last line %q, want it to contain %q", tc.args, last, tc.line)
		}
	}
}

func TestUpgradeFlags(t *testing.T) {
	cmd := NewCommand(testDeps())
	for name, flags := range map[string][]string{
		"upgrade":  {"package", "sha256", "allow-downgrade", "timeout", "resume", "journal"},
		"rollback": {"to", "timeout"},
	} {
		sub, _, err := cmd.Find([]string{name})
		if err != nil || sub.Name() != name {
			t.Fatalf("%s is not a command: %v", name, err)
		}
		for _, f := range flags {
			if sub.Flags().Lookup(f) == nil {
				t.Errorf("%s has no --%s", name, f)
			}
		}
	}
}

// confirm refuses its flags before it looks at the host, naming each.
func TestUpgradeConfirmRefusesBadFlags(t *testing.T) {
	cmd := NewCommand(testDeps())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"upgrade", "confirm", "--timeout", "0s", "--job", "Bad_Name"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `--timeout: Invalid value: "0s"`) || !strings.Contains(err.Error(), `--job: Invalid value: "Bad_Name"`) {
		t.Fatalf("upgrade confirm with bad flags: %v\n%s", err, out.String())
	}
}
