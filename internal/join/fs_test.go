package join_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
)

// A --config written with forward slashes names the same file as the
// backslashed default: join accepts it, as `service install` and `config`
// do, and writes and runs the service with it in canonical form.
func TestJoinAcceptsAConfigPathWithForwardSlashes(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(true)
	o := w.Options()
	o.ConfigFile = `C:/etc/kubeedge/config/edgecore.yaml`
	var out strings.Builder
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join refused --config %s: %v\n%s", o.ConfigFile, err, out.String())
	}
	if !w.FS.Has(hosttest.CfgFile) || !strings.Contains(w.FS.Content(hosttest.CfgFile), "hostnameOverride: line3-pc") {
		t.Errorf("no configuration written at %s; files: %v", hosttest.CfgFile, w.FS.Paths())
	}
	hosttest.MustContain(t, "output", out.String(), `wrote C:\etc\kubeedge\config\edgecore.yaml`,
		`installed service "edgecore": "C:\Program Files\edgecore\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`)
	if svc := w.Services.Configs["edgecore"]; !reflect.DeepEqual(svc.Args, []string{"--config", hosttest.CfgFile}) {
		t.Errorf("service runs with %q, want --config %s", svc.Args, hosttest.CfgFile)
	}
	for _, p := range w.FS.Paths() {
		if strings.Contains(p, "/") {
			t.Errorf("created %s with a forward slash", p)
		}
	}
}

// Lower-case drive letters and "." are spellings of the protected
// directory too; ".." out of it is not.
func TestJoinJudgesTheConfigPathAsWindowsDoes(t *testing.T) {
	w := hosttest.NewWorld(t)
	for _, tc := range []struct{ path, wantErr string }{
		{`c:\etc\kubeedge\.\config\edgecore.yaml`, ""},
		{`C:\etc\kubeedge\..\edgecore.yaml`, `--config: Invalid value: "C:\\etc\\kubeedge\\..\\edgecore.yaml": keep the configuration under C:\etc\kubeedge`},
		{`C:\etc\kubeedge-old\edgecore.yaml`, "keep the configuration under C:\\etc\\kubeedge"},
		{`C:/etc/kubeedge/`, "keep the configuration under C:\\etc\\kubeedge"},
		{`/etc/kubeedge/config/edgecore.yaml`, `--config: Invalid value: "/etc/kubeedge/config/edgecore.yaml": give an absolute path`},
		{`C:etc\kubeedge\config\edgecore.yaml`, "give an absolute path"},
		{``, `--config: Required value: give the configuration file to write, for example C:\etc\kubeedge\config\edgecore.yaml`},
	} {
		o := w.Options()
		o.ConfigFile = tc.path
		j, err := join.New(o, w.System())
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("--config %s refused: %v", tc.path, err)
		case tc.wantErr == "" && j.Opts().ConfigFile != hosttest.CfgFile:
			t.Errorf("--config %s is written at %s, want %s", tc.path, j.Opts().ConfigFile, hosttest.CfgFile)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("--config %q: error %v, want one containing %q", tc.path, err, tc.wantErr)
		}
	}
}

// On a Windows installed on D:, the protected directory and the
// suggested configuration file are on D:.
func TestJoinTakesTheKubeEdgeDirectoryFromTheHost(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Host.SystemDrive = "D:"
	o := w.Options()
	_, err := join.New(o, w.System())
	hosttest.MustContain(t, "error", fmt.Sprint(err), `keep the configuration under D:\etc\kubeedge`)
	o.ConfigFile = ""
	_, err = join.New(o, w.System())
	hosttest.MustContain(t, "error", fmt.Sprint(err), `for example D:\etc\kubeedge\config\edgecore.yaml`)
	o.ConfigFile = `D:\etc\kubeedge\config\edgecore.yaml`
	j, err := join.New(o, w.System())
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Plan().Steps[4].Description; !strings.Contains(got, `D:\etc\kubeedge`) {
		t.Errorf("restrict access step: %s", got)
	}
	if hub := j.Config().Modules.EdgeHub; hub.TLSCertFile != `D:\etc\kubeedge\certs\server.crt` {
		t.Errorf("node certificate at %s", hub.TLSCertFile)
	}
}
