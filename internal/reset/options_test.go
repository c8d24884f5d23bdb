package reset_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/reset"
)

func TestResetOptions(t *testing.T) {
	o := reset.NewOptions(hosttest.Deps(hosttest.DepsHost))
	fs := pflag.NewFlagSet("reset", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.ConfigFile != `C:\etc\kubeedge\config\edgecore.yaml` {
		t.Errorf("default --config %s", o.ConfigFile)
	}
	if err := fs.Parse([]string{"--config", `C:\x.yaml`, "--keep-data", "--force", "--dry-run"}); err != nil {
		t.Fatal(err)
	}
	var asked []config.Layout
	o.NetworkOf = func(d *deps.Dependencies) reset.NetworkRemover { asked = append(asked, d.Layout); return nil }
	o.Complete(hosttest.Deps(hosttest.DepsHost))
	if o.ConfigFile != `C:\x.yaml` || !o.KeepData || !o.Force || !o.DryRun || o.RemoveNetwork || len(asked) != 0 {
		t.Errorf("without --network: %+v, remover asked %d times", o, len(asked))
	}
	if o.LogFile != `C:\var\log\kubeedge\edgecore.log` || o.Host != hosttest.DepsHost {
		t.Errorf("completed %+v", o)
	}
	fs.Parse([]string{"--network"})
	o.Complete(hosttest.Deps(hosttest.DepsHost))
	if !o.RemoveNetwork || len(asked) != 1 || asked[0] != config.NewLayout(hosttest.DepsHost) {
		t.Errorf("--network: remover asked for %+v", asked)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// An empty --config would otherwise read as "no configuration" and
	// send reset to the default locations.
	fs.Parse([]string{"--config", ""})
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--config: Required value") ||
		!strings.Contains(err.Error(), `C:\etc\kubeedge\config\edgecore.yaml`) {
		t.Errorf("empty --config: %v", err)
	}
}
