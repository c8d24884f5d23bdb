package node

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The node's flags land in its options, --memory-limit included: it is
// the node's input, not a package variable of memlimit.
func TestOptionsAddFlags(t *testing.T) {
	o := Options{ConfigFile: `C:\etc\kubeedge\config\edgecore.yaml`}
	fs := pflag.NewFlagSet("edgecore", pflag.ContinueOnError)
	o.AddFlags(fs)
	if got := fs.Lookup("config").DefValue; got != `C:\etc\kubeedge\config\edgecore.yaml` {
		t.Errorf("--config defaults to %q, want the options' path", got)
	}
	if err := fs.Parse([]string{"--config", `D:\edge.yaml`, "--skip-environment-check", "--memory-limit", "300Mi"}); err != nil {
		t.Fatal(err)
	}
	if o.ConfigFile != `D:\edge.yaml` || !o.SkipEnvironmentCheck || o.MemoryLimit.String() != "300Mi" {
		t.Errorf("options %+v, memory limit %q", o, o.MemoryLimit.String())
	}

	// Two option values do not share a limit.
	var other Options
	other.AddFlags(pflag.NewFlagSet("other", pflag.ContinueOnError))
	if other.MemoryLimit.String() == "300Mi" {
		t.Error("a second Options sees the first one's --memory-limit")
	}

	err := fs.Parse([]string{"--memory-limit", "1Ki"})
	if err == nil || !strings.Contains(err.Error(), "memory-limit") {
		t.Errorf("a limit below the smallest is not refused naming the flag: %v", err)
	}
}
