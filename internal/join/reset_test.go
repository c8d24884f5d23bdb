package join

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/windows/service"
)

const cniConf = `C:\Program Files\containerd\cni\conf\0-containerd-nat.conf`

// joined is a host after a successful join, with containerd's CNI
// configuration, a pod's directory and rotated logs as a running node has.
func joined(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	w.fs.write(cniConf, `{"type": "nat"}`)
	w.edgecoreIssues(true)
	if err := Run(context.Background(), &bytes.Buffer{}, w.options(), w.system()); err != nil {
		t.Fatal(err)
	}
	w.fs.write(`C:\var\lib\kubelet\pods\0a1b\etc-hosts`, "hosts")
	w.fs.write(`C:\var\log\kubeedge\edgecore-2025-01-02T03-04-05.000.log.gz`, "old log")
	w.fs.write(dbFile+"-journal", "journal")
	w.fs.changes = nil
	w.services.calls = nil
	return w
}

func (w *world) resetOptions() ResetOptions {
	return ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Host: w.host, Force: true}
}

var resetStepNames = []string{
	"[1/7] check Administrator",
	"[2/7] stop and remove the service",
	"[3/7] remove the configuration",
	"[4/7] remove the certificates",
	"[5/7] remove the database",
	"[6/7] remove the logs",
	"[7/7] remove empty directories",
}

func TestResetRemovesWhatJoinCreatedAndLeavesContainerdAlone(t *testing.T) {
	w := joined(t)
	var out bytes.Buffer
	if err := Reset(context.Background(), strings.NewReader(""), &out, false, w.resetOptions(), w.system()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	if lines := stepLines(got); !reflect.DeepEqual(lines, resetStepNames) {
		t.Errorf("steps:\n%s", strings.Join(lines, "\n"))
	}
	mustContain(t, "output", got,
		"Resetting node line3-pc",
		`stopped and removed service "edgecore"`,
		`removed C:\etc\kubeedge\config\edgecore.yaml`,
		`removed C:\etc\kubeedge\certs\server.key`,
		`removed C:\var\lib\kubeedge\edgecore.db`+"\n",
		`removed C:\var\lib\kubeedge\edgecore.db-journal`,
		`removed C:\var\log\kubeedge`+"\n",
		`removed C:\etc\kubeedge`+"\n",
		`left alone`, `C:\var\lib\kubelet`,
		"kubectl delete node line3-pc")
	for _, gone := range []string{cfgFile, caFile, certFile, keyFile, dbFile, logFile, `C:\etc\kubeedge`, `C:\var\lib\kubeedge`, `C:\var\log\kubeedge`} {
		if w.fs.has(gone) {
			t.Errorf("%s is still there", gone)
		}
	}
	for _, kept := range []string{cniConf, `C:\var\lib\kubelet\pods\0a1b\etc-hosts`, `C:\var\log\pods`} {
		if !w.fs.has(kept) {
			t.Errorf("%s was removed", kept)
		}
	}
	if len(w.services.installed) != 0 {
		t.Errorf("service still installed")
	}
	// A second reset finds nothing and succeeds.
	out.Reset()
	if err := Reset(context.Background(), nil, &out, false, w.resetOptions(), w.system()); err != nil {
		t.Fatalf("second reset: %v\n%s", err, out.String())
	}
	mustContain(t, "second reset", out.String(), `service "edgecore" is not installed`,
		`No configuration at C:\etc\kubeedge\config\edgecore.yaml; removing from the default locations.`)
}

func TestResetKeepData(t *testing.T) {
	w := joined(t)
	o := w.resetOptions()
	o.KeepData = true
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, o, w.system()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "remove the database") || len(stepLines(out.String())) != 6 {
		t.Errorf("the database step ran:\n%s", out.String())
	}
	if !w.fs.has(dbFile) || !w.fs.has(dbFile+"-journal") {
		t.Errorf("--keep-data removed the database")
	}
	if w.fs.has(cfgFile) || w.fs.has(certFile) {
		t.Errorf("configuration or certificates kept")
	}
	// A new join accepts the kept database and leaves it on rollback.
	w.edgecoreLogs(logLineRefused)
	err := Run(context.Background(), &bytes.Buffer{}, w.options(), w.system())
	stepError(t, err, 8)
	if !w.fs.has(dbFile) {
		t.Errorf("the join rollback removed the kept database")
	}
}

func TestResetAsksUnlessForced(t *testing.T) {
	for name, tc := range map[string]struct {
		interactive bool
		answer      string
		wantErr     string
		proceeds    bool
	}{
		"not a terminal":  {interactive: false, wantErr: "standard input is not a terminal, so reset cannot ask for confirmation: pass --force"},
		"answer no":       {interactive: true, answer: "n\n", wantErr: "reset cancelled; nothing was changed"},
		"empty answer":    {interactive: true, answer: "\n", wantErr: "reset cancelled"},
		"end of input":    {interactive: true, answer: "", wantErr: "reset cancelled"},
		"answer yes":      {interactive: true, answer: "yes\n", proceeds: true},
		"answer Y no EOL": {interactive: true, answer: "Y", proceeds: true},
	} {
		t.Run(name, func(t *testing.T) {
			w := joined(t)
			before := w.fs.paths()
			o := w.resetOptions()
			o.Force = false
			var out bytes.Buffer
			err := Reset(context.Background(), strings.NewReader(tc.answer), &out, tc.interactive, o, w.system())
			if tc.proceeds {
				if err != nil {
					t.Fatal(err)
				}
				mustContain(t, "output", out.String(), "Reset removes node line3-pc from this host:\n[1/7] check Administrator: ",
					"Reset this node? [y/N]: ", "Resetting node line3-pc")
				if w.fs.has(cfgFile) {
					t.Errorf("confirmed, yet nothing was removed")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if tc.interactive && !errors.Is(err, ErrCancelled) {
				t.Errorf("not ErrCancelled: %v", err)
			}
			if after := w.fs.paths(); !reflect.DeepEqual(before, after) || len(w.services.calls) > 0 {
				t.Errorf("changed the host without confirmation: %v", w.services.calls)
			}
		})
	}
}

func TestResetFailureNamesTheStepAndCanBeRunAgain(t *testing.T) {
	w := joined(t)
	w.fs.failRemove[certFile] = errors.New("The process cannot access the file because it is being used by another process.")
	var out bytes.Buffer
	err := Reset(context.Background(), nil, &out, false, w.resetOptions(), w.system())
	var se *StepError
	if !errors.As(err, &se) || se.Index != 4 || se.Total != 7 {
		t.Fatalf("error %v", err)
	}
	mustContain(t, "error", err.Error(), "reset failed at step 4/7 (remove the certificates)",
		`C:\etc\kubeedge\certs\server.crt: The process cannot access the file`,
		"fix: make sure edgecore is stopped", "then run reset again; it skips what is already gone")
	if strings.Contains(out.String(), "Rolling back") {
		t.Errorf("reset has nothing to roll back:\n%s", out.String())
	}
	if w.fs.has(keyFile) || w.fs.has(caFile) {
		t.Errorf("the other certificate files were not removed")
	}
	delete(w.fs.failRemove, certFile)
	if err := Reset(context.Background(), nil, &bytes.Buffer{}, false, w.resetOptions(), w.system()); err != nil {
		t.Fatalf("reset again: %v", err)
	}
	if w.fs.has(certFile) || w.fs.has(`C:\etc\kubeedge`) || w.fs.has(dbFile) {
		t.Errorf("second reset left files: %v", w.fs.paths())
	}
}

func TestResetStopsOnServiceErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"access denied": {fmt.Errorf(`uninstall service "edgecore": %w`, service.ErrAccessDenied), `fix: open PowerShell with "Run as administrator"`},
		"timeout":       {fmt.Errorf(`uninstall service "edgecore": %w after 45s; if it does not stop, end it with taskkill`, service.ErrTimeout), "taskkill"},
	} {
		t.Run(name, func(t *testing.T) {
			w := joined(t)
			w.services.uninstallErr = tc.err
			err := Reset(context.Background(), nil, &bytes.Buffer{}, false, w.resetOptions(), w.system())
			mustContain(t, "error", fmt.Sprint(err), "reset failed at step 2/7 (stop and remove the service)", tc.want)
			// The files of a service that may still run are left.
			if !w.fs.has(cfgFile) || !w.fs.has(dbFile) {
				t.Errorf("removed files while the service may still run")
			}
		})
	}
}

func TestResetNotAdministratorChangesNothing(t *testing.T) {
	w := joined(t)
	w.elevated = false
	before := w.fs.paths()
	err := Reset(context.Background(), nil, &bytes.Buffer{}, false, w.resetOptions(), w.system())
	mustContain(t, "error", fmt.Sprint(err), "reset failed at step 1/7 (check Administrator): not running as Administrator, which reset needs",
		`fix: open PowerShell with "Run as administrator"`)
	if !reflect.DeepEqual(before, w.fs.paths()) || len(w.services.calls) > 0 {
		t.Errorf("changed the host")
	}
}

func TestResetKeepsDirectoriesThatHoldOtherFiles(t *testing.T) {
	w := joined(t)
	w.fs.write(`C:\etc\kubeedge\manifests\static-pod.yaml`, "kind: Pod")
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, w.resetOptions(), w.system()); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "output", out.String(), `kept C:\etc\kubeedge\manifests: it is not empty`, `kept C:\etc\kubeedge: it is not empty`)
	if !w.fs.has(`C:\etc\kubeedge\manifests\static-pod.yaml`) {
		t.Errorf("removed the operator's static pod")
	}
}

func TestResetWithAnUnreadableConfigurationUsesTheDefaults(t *testing.T) {
	w := joined(t)
	w.fs.write(cfgFile, "modules: [this is not\n")
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, w.resetOptions(), w.system()); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "output", out.String(), `Cannot read C:\etc\kubeedge\config\edgecore.yaml (`, "removing from the default locations")
	if w.fs.has(cfgFile) || w.fs.has(certFile) || w.fs.has(dbFile) {
		t.Errorf("default locations not cleaned: %v", w.fs.paths())
	}
}

func TestResetDryRunChangesNothing(t *testing.T) {
	w := joined(t)
	before := w.fs.paths()
	o := w.resetOptions()
	o.DryRun = true
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, o, w.system()); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "dry run", out.String(), "Dry run: edgecore.exe reset would do the following; nothing is changed.",
		`[3/7] remove the configuration: remove C:\etc\kubeedge\config\edgecore.yaml`,
		`[6/7] remove the logs: remove C:\var\log\kubeedge and everything in it`)
	if !reflect.DeepEqual(before, w.fs.paths()) || len(w.services.calls) > 0 {
		t.Errorf("dry run changed the host")
	}
}
