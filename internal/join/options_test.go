package join_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

func TestOptionsFlags(t *testing.T) {
	o := join.NewOptions(hosttest.Deps(hosttest.DepsHost))
	fs := pflag.NewFlagSet("join", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.ConfigFile != `C:\etc\kubeedge\config\edgecore.yaml` || o.Timeout != join.DefaultTimeout || o.CertPort != config.DefaultCertPort || o.HubProtocol != config.HubWebSocket {
		t.Errorf("defaults %+v", o)
	}
	err := fs.Parse([]string{"-e", "192.168.50.10:10000", "-t", hosttest.Token, "-i", "line3", "-l", "a=b,c=d", "-p", "npipe://./pipe/x",
		"--hub-protocol", "quic", "--stream=false", "--set", "a=1,b=[1, 2]", "--set", "c=3",
		"--config", `C:\etc\kubeedge\config\x.yaml`, "--timeout", "1m", "--dry-run"})
	if err != nil {
		t.Fatal(err)
	}
	j := o.JoinOptions
	if j.CloudCoreIPPort != "192.168.50.10:10000" || j.Token != hosttest.Token || j.EdgeNodeName != "line3" ||
		strings.Join(j.Labels, ";") != "a=b;c=d" || j.RemoteRuntimeEndpoint != "npipe://./pipe/x" || j.HubProtocol != "quic" || !j.NoStream {
		t.Errorf("keadm's flags: %+v", j)
	}
	if o.ConfigFile != `C:\etc\kubeedge\config\x.yaml` || o.Timeout != time.Minute || !o.DryRun {
		t.Errorf("join's flags: %+v", o)
	}
	if err := o.Complete(hosttest.Deps(hosttest.DepsHost)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.Set, ";"); got != "a=1;b=[1, 2];c=3" {
		t.Errorf("--set split into %q", got)
	}
	exe, _ := os.Executable()
	if o.Executable != exe || o.LogFile != `C:\var\log\kubeedge\edgecore.log` || o.Host.Hostname != "LINE3-PC" || o.Host.NodeIP == "" {
		t.Errorf("completed %+v", o)
	}
}

// Validate reports every problem of the flags at once, each with the flag,
// the value and the fix, as join's first step.
func TestOptionsValidate(t *testing.T) {
	valid := func() join.Options {
		o := *join.NewOptions(hosttest.Deps(hosttest.DepsHost))
		o.CloudCoreIPPort, o.Token = "192.168.50.10:10000", hosttest.Token
		return o
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(*join.Options)
		want   []string
	}{
		"timeout":   {func(o *join.Options) { o.Timeout = 0 }, []string{`--timeout: Invalid value: "0s": give how long to wait for the certificates and the hub connection`}},
		"no config": {func(o *join.Options) { o.ConfigFile = "" }, []string{`--config: Required value: give the configuration file to write, for example C:\etc\kubeedge\config\edgecore.yaml`}},
		"relative":  {func(o *join.Options) { o.ConfigFile = "edgecore.yaml" }, []string{`--config: Invalid value: "edgecore.yaml": give an absolute path`}},
		"outside":   {func(o *join.Options) { o.ConfigFile = `C:\edgecore.yaml` }, []string{`--config: Invalid value: "C:\\edgecore.yaml": keep the configuration under C:\etc\kubeedge`}},
		"the dir":   {func(o *join.Options) { o.ConfigFile = `C:\etc\kubeedge` }, []string{`--config: Invalid value: "C:\\etc\\kubeedge": keep the configuration under`}},
		"set":       {func(o *join.Options) { o.Set = []string{"maxPods"} }, []string{`--set: Invalid value: "maxPods": expected path=value`}},
		"together": {func(o *join.Options) { o.Token, o.Timeout = "", -time.Second }, []string{
			"--token: Required value: run `keadm gettoken`", `--timeout: Invalid value: "-1s"`}},
	} {
		t.Run(name, func(t *testing.T) {
			o := valid()
			tc.change(&o)
			err := o.Validate()
			var se *steps.StepError
			if !errors.As(err, &se) || se.Index != 1 || se.Step != join.StepValidate {
				t.Fatalf("%v, want a failure of step 1", err)
			}
			var invalid *config.InvalidError
			if !errors.As(err, &invalid) || invalid.What != "join options" {
				t.Errorf("%v, want join options not valid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
		})
	}
}
