package reset_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/reset"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const cniConf = `C:\Program Files\containerd\cni\conf\0-containerd-nat.conf`

// joined is a host after a successful join, with containerd's CNI
// configuration, a pod's directory and rotated logs as a running node has.
func joined(t *testing.T) *hosttest.World {
	t.Helper()
	w := hosttest.NewWorld(t)
	w.FS.AddFile(cniConf, `{"type": "nat"}`)
	w.EdgecoreIssues(true)
	if err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System()); err != nil {
		t.Fatal(err)
	}
	w.FS.AddFile(`C:\var\lib\kubelet\pods\0a1b\etc-hosts`, "hosts")
	w.FS.AddFile(`C:\var\log\kubeedge\edgecore-2025-01-02T03-04-05.000.log.gz`, "old log")
	w.FS.AddFile(hosttest.DBFile+"-journal", "journal")
	w.FS.Changes = nil
	w.Services.Calls = nil
	return w
}

func resetOptions(w *hosttest.World) reset.Options {
	return reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Host: w.Host, Layout: config.NewLayout(w.Host), Force: true}
}

var resetStepNames = []string{
	"[1/8] check Administrator",
	"[2/8] stop and remove the service",
	"[3/8] remove the configuration",
	"[4/8] remove the certificates",
	"[5/8] remove the database",
	"[6/8] remove the upgrade backups and journal",
	"[7/8] remove the logs",
	"[8/8] remove empty directories",
}

func TestResetRemovesWhatJoinCreatedAndLeavesContainerdAlone(t *testing.T) {
	w := joined(t)
	var out bytes.Buffer
	if err := reset.Run(context.Background(), strings.NewReader(""), &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	if lines := hosttest.StepLines(got); !reflect.DeepEqual(lines, resetStepNames) {
		t.Errorf("steps:\n%s", strings.Join(lines, "\n"))
	}
	hosttest.MustContain(t, "output", got,
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
	for _, gone := range []string{hosttest.CfgFile, hosttest.CAFile, hosttest.CertFile, hosttest.KeyFile, hosttest.DBFile, hosttest.LogFile, `C:\etc\kubeedge`, `C:\var\lib\kubeedge`, `C:\var\log\kubeedge`} {
		if w.FS.Has(gone) {
			t.Errorf("%s is still there", gone)
		}
	}
	for _, kept := range []string{cniConf, `C:\var\lib\kubelet\pods\0a1b\etc-hosts`, `C:\var\log\pods`} {
		if !w.FS.Has(kept) {
			t.Errorf("%s was removed", kept)
		}
	}
	if len(w.Services.Configs) != 0 {
		t.Errorf("service still installed")
	}
	// A second reset finds nothing and succeeds.
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("second reset: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "second reset", out.String(), `service "edgecore" is not installed`,
		`No configuration at C:\etc\kubeedge\config\edgecore.yaml; removing from the default locations.`)
}

func TestResetKeepData(t *testing.T) {
	w := joined(t)
	o := resetOptions(w)
	o.KeepData = true
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, o, w.System()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "remove the database") || len(hosttest.StepLines(out.String())) != 7 {
		t.Errorf("the database step ran:\n%s", out.String())
	}
	if !w.FS.Has(hosttest.DBFile) || !w.FS.Has(hosttest.DBFile+"-journal") {
		t.Errorf("--keep-data removed the database")
	}
	if w.FS.Has(hosttest.CfgFile) || w.FS.Has(hosttest.CertFile) {
		t.Errorf("configuration or certificates kept")
	}
	// A new join accepts the kept database and leaves it on rollback.
	w.EdgecoreLogs(hosttest.LogLineRefused)
	err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System())
	hosttest.StepError(t, err, 9, len(hosttest.JoinStepNames))
	if !w.FS.Has(hosttest.DBFile) {
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
			before := w.FS.Paths()
			o := resetOptions(w)
			o.Force = false
			var out bytes.Buffer
			err := reset.Run(context.Background(), strings.NewReader(tc.answer), &out, tc.interactive, o, w.System())
			if tc.proceeds {
				if err != nil {
					t.Fatal(err)
				}
				hosttest.MustContain(t, "output", out.String(), "Reset removes node line3-pc from this host:\n[1/8] check Administrator: ",
					"Reset this node? [y/N]: ", "Resetting node line3-pc")
				if w.FS.Has(hosttest.CfgFile) {
					t.Errorf("confirmed, yet nothing was removed")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if tc.interactive && !errors.Is(err, reset.ErrCancelled) {
				t.Errorf("not reset.ErrCancelled: %v", err)
			}
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) > 0 {
				t.Errorf("changed the host without confirmation: %v", w.Services.Calls)
			}
		})
	}
}

func TestResetFailureNamesTheStepAndCanBeRunAgain(t *testing.T) {
	w := joined(t)
	w.FS.FailRemove[hosttest.CertFile] = errors.New("The process cannot access the file because it is being used by another process.")
	var out bytes.Buffer
	err := reset.Run(context.Background(), nil, &out, false, resetOptions(w), w.System())
	var se *steps.StepError
	if !errors.As(err, &se) || se.Index != 4 || se.Total != 8 {
		t.Fatalf("error %v", err)
	}
	hosttest.MustContain(t, "error", err.Error(), "reset failed at step 4/8 (remove the certificates)",
		`C:\etc\kubeedge\certs\server.crt: The process cannot access the file`,
		"fix: make sure edgecore is stopped", "then run reset again; it skips what is already gone")
	if strings.Contains(out.String(), "Rolling back") {
		t.Errorf("reset has nothing to roll back:\n%s", out.String())
	}
	if w.FS.Has(hosttest.KeyFile) || w.FS.Has(hosttest.CAFile) {
		t.Errorf("the other certificate files were not removed")
	}
	delete(w.FS.FailRemove, hosttest.CertFile)
	if err := reset.Run(context.Background(), nil, &bytes.Buffer{}, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("reset again: %v", err)
	}
	if w.FS.Has(hosttest.CertFile) || w.FS.Has(`C:\etc\kubeedge`) || w.FS.Has(hosttest.DBFile) {
		t.Errorf("second reset left files: %v", w.FS.Paths())
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
			w.Services.UninstallErr = tc.err
			err := reset.Run(context.Background(), nil, &bytes.Buffer{}, false, resetOptions(w), w.System())
			hosttest.MustContain(t, "error", fmt.Sprint(err), "reset failed at step 2/8 (stop and remove the service)", tc.want)
			// The files of a service that may still run are left.
			if !w.FS.Has(hosttest.CfgFile) || !w.FS.Has(hosttest.DBFile) {
				t.Errorf("removed files while the service may still run")
			}
		})
	}
}

func TestResetNotAdministratorChangesNothing(t *testing.T) {
	w := joined(t)
	w.Elevated = false
	before := w.FS.Paths()
	err := reset.Run(context.Background(), nil, &bytes.Buffer{}, false, resetOptions(w), w.System())
	hosttest.MustContain(t, "error", fmt.Sprint(err), "reset failed at step 1/8 (check Administrator): not running as Administrator, which reset needs",
		`fix: open PowerShell with "Run as administrator"`)
	if !reflect.DeepEqual(before, w.FS.Paths()) || len(w.Services.Calls) > 0 {
		t.Errorf("changed the host")
	}
}

func TestResetKeepsDirectoriesThatHoldOtherFiles(t *testing.T) {
	w := joined(t)
	w.FS.AddFile(`C:\etc\kubeedge\manifests\static-pod.yaml`, "kind: Pod")
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatal(err)
	}
	hosttest.MustContain(t, "output", out.String(), `kept C:\etc\kubeedge\manifests: it is not empty`, `kept C:\etc\kubeedge: it is not empty`)
	if !w.FS.Has(`C:\etc\kubeedge\manifests\static-pod.yaml`) {
		t.Errorf("removed the operator's static pod")
	}
}

func TestResetWithAnUnreadableConfigurationUsesTheDefaultsAndKeepsIt(t *testing.T) {
	for name, content := range map[string]string{
		"broken YAML": "modules: [this is not\n",
		// A mistyped --config may name any file: a document, a script.
		"not a configuration at all": "Quarterly report\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			w := joined(t)
			w.FS.AddFile(hosttest.CfgFile, content)
			var out bytes.Buffer
			if err := reset.Run(context.Background(), nil, &out, false, resetOptions(w), w.System()); err != nil {
				t.Fatal(err)
			}
			hosttest.MustContain(t, "output", out.String(), `Cannot read C:\etc\kubeedge\config\edgecore.yaml (`, "removing from the default locations",
				`kept C:\etc\kubeedge\config\edgecore.yaml: it could not be read as a configuration, so it may be any file; look at it and remove it yourself`)
			if w.FS.Content(hosttest.CfgFile) != content {
				t.Errorf("reset removed or changed %s, which it could not read as a configuration", hosttest.CfgFile)
			}
			if w.FS.Has(hosttest.CertFile) || w.FS.Has(hosttest.DBFile) {
				t.Errorf("default locations not cleaned: %v", w.FS.Paths())
			}
		})
	}
}

// hostile is a configuration that names files of others: the CA in
// Windows' own directory, the key and the database in another program's,
// as a mistake or an attack would.
const (
	foreignCA   = `C:\Windows\System32\config\SAM`
	foreignKey  = `D:\Important\keys\server.key`
	foreignDB   = `C:\ProgramData\OtherApp\app.db`
	foreignCert = `C:\etc\kubeedge\..\shared\server.crt`
)

func TestResetRemovesNothingOutsideTheNodeDirectories(t *testing.T) {
	w := joined(t)
	// Files the operator and other programs own.
	others := map[string]string{
		foreignCA: "hive", foreignKey: "someone's key", foreignDB: "other data", foreignDB + "-wal": "wal",
		`C:\etc\shared\server.crt`: "shared cert",
	}
	for p, c := range others {
		w.FS.AddFile(p, c)
	}
	cfg := w.FS.Content(hosttest.CfgFile)
	for from, to := range map[string]string{
		hosttest.CAFile:   foreignCA,
		hosttest.KeyFile:  foreignKey,
		hosttest.CertFile: foreignCert,
		hosttest.DBFile:   foreignDB,
	} {
		if !strings.Contains(cfg, from) {
			t.Fatalf("the joined configuration does not name %s:\n%s", from, cfg)
		}
		cfg = strings.ReplaceAll(cfg, from, to)
	}
	w.FS.AddFile(hosttest.CfgFile, cfg)
	if c, err := w.System().LoadConfig(hosttest.CfgFile); err != nil || c.Modules.EdgeHub.TLSCAFile != foreignCA {
		t.Fatalf("the hostile configuration does not load: %v", err)
	}
	o := resetOptions(w)
	o.DryRun = true
	var dry bytes.Buffer
	if err := reset.Run(context.Background(), nil, &dry, false, o, w.System()); err != nil {
		t.Fatal(err)
	}
	hosttest.MustContain(t, "dry run", dry.String(),
		`leave C:\Windows\System32\config\SAM (modules.edgeHub.tlsCaFile): outside the node's directories`,
		`leave C:\ProgramData\OtherApp\app.db (database.dataSource): outside the node's directories`)

	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for p, c := range others {
		if w.FS.Content(p) != c {
			t.Errorf("reset removed or changed %s, which the configuration names outside the node's directories", p)
		}
	}
	hosttest.MustContain(t, "output", out.String(),
		`left C:\Windows\System32\config\SAM, which modules.edgeHub.tlsCaFile names: it is outside the node's directories (C:\etc\kubeedge, C:\var\lib\kubeedge, C:\var\log\kubeedge)`,
		`left D:\Important\keys\server.key, which modules.edgeHub.tlsPrivateKeyFile names`,
		`left C:\etc\shared\server.crt, which modules.edgeHub.tlsCertFile names`,
		`left C:\ProgramData\OtherApp\app.db, which database.dataSource names`,
		`left C:\ProgramData\OtherApp\app.db-wal, which database.dataSource names`,
		"remove it yourself if nothing else uses it",
		`removed C:\etc\kubeedge\config\edgecore.yaml`)
	// What lies inside is still removed.
	if w.FS.Has(hosttest.CfgFile) || w.FS.Has(`C:\var\log\kubeedge`) {
		t.Errorf("the node's own files were not removed: %v", w.FS.Paths())
	}
	// The directories of the foreign files stay, even when empty.
	w.FS.AddDir(`C:\ProgramData\Empty`)
	for _, d := range []string{`C:\Windows\System32\config`, `D:\Important\keys`, `C:\ProgramData\OtherApp`} {
		if !w.FS.Has(d) {
			t.Errorf("reset removed %s", d)
		}
	}
}

func TestResetLeavesAConfigurationOutsideTheNodeDirectories(t *testing.T) {
	w := joined(t)
	elsewhere := `C:\Users\admin\Desktop\edgecore.yaml`
	w.FS.AddFile(elsewhere, w.FS.Content(hosttest.CfgFile))
	o := resetOptions(w)
	o.ConfigFile = elsewhere
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, o, w.System()); err != nil {
		t.Fatal(err)
	}
	hosttest.MustContain(t, "output", out.String(), `left C:\Users\admin\Desktop\edgecore.yaml, which --config names: it is outside the node's directories`)
	if !w.FS.Has(elsewhere) || !w.FS.Has(`C:\Users\admin\Desktop`) {
		t.Errorf("reset removed the operator's copy of the configuration or its directory")
	}
}

func TestResetDoesNotRemoveThroughALink(t *testing.T) {
	w := joined(t)
	// C:\etc\kubeedge\certs replaced by a junction to another directory:
	// the key's path is inside by its text, but the file is not.
	w.FS.AddLink(`C:\etc\kubeedge\certs`)
	err := reset.Run(context.Background(), nil, &bytes.Buffer{}, false, resetOptions(w), w.System())
	hosttest.MustContain(t, "error", fmt.Sprint(err), "reset failed at step 4/8 (remove the certificates)",
		`C:\etc\kubeedge\certs\server.key is reached through C:\etc\kubeedge\certs, a symbolic link or junction`)
	if !w.FS.Has(hosttest.KeyFile) || !w.FS.Has(hosttest.CertFile) {
		t.Errorf("reset removed a file through a link")
	}
}

func TestResetRemovesUpgradeBackupsAndJournal(t *testing.T) {
	w := joined(t)
	backup := `C:\etc\kubeedge\backup\v0.1.0`
	for _, f := range []string{backup + `\edgecore.exe`, backup + `\edgecore.yaml`, backup + `\edgecore.db`, backup + `\backup.json`,
		`C:\etc\kubeedge\upgrade\journal.json`, `C:\etc\kubeedge\upgrade\v0.2.0\edgecore.exe`} {
		w.FS.AddFile(f, "copy")
	}
	for _, keep := range []bool{false, true} {
		o := resetOptions(w)
		o.KeepData = keep
		o.Force = false
		var out bytes.Buffer
		// Still asked first.
		if err := reset.Run(context.Background(), strings.NewReader("n\n"), &out, true, o, w.System()); !errors.Is(err, reset.ErrCancelled) {
			t.Fatalf("keep-data %v: %v", keep, err)
		}
		hosttest.MustContain(t, "question", out.String(), `remove the upgrade backups and journal: remove C:\etc\kubeedge\backup and C:\etc\kubeedge\upgrade`, "Reset this node? [y/N]")
		if !w.FS.Has(backup + `\edgecore.db`) {
			t.Fatal("removed before the answer")
		}
	}
	o := resetOptions(w)
	o.KeepData = true
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, o, w.System()); err != nil {
		t.Fatal(err)
	}
	hosttest.MustContain(t, "output", out.String(), `removed C:\etc\kubeedge\backup`+"\n", `removed C:\etc\kubeedge\upgrade`+"\n")
	for _, gone := range []string{`C:\etc\kubeedge\backup`, `C:\etc\kubeedge\upgrade`, `C:\etc\kubeedge`} {
		if w.FS.Has(gone) {
			t.Errorf("%s is still there (the backups keep copies of the database and the token)", gone)
		}
	}
	if !w.FS.Has(hosttest.DBFile) {
		t.Errorf("--keep-data removed the database itself")
	}
}

func TestResetDryRunChangesNothing(t *testing.T) {
	w := joined(t)
	before := w.FS.Paths()
	o := resetOptions(w)
	o.DryRun = true
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, o, w.System()); err != nil {
		t.Fatal(err)
	}
	hosttest.MustContain(t, "dry run", out.String(), "Dry run: edgecore.exe reset would do the following; nothing is changed.",
		`[3/8] remove the configuration: remove C:\etc\kubeedge\config\edgecore.yaml`,
		`[6/8] remove the upgrade backups and journal: remove C:\etc\kubeedge\backup and C:\etc\kubeedge\upgrade`,
		`[7/8] remove the logs: remove C:\var\log\kubeedge and everything in it`)
	if !reflect.DeepEqual(before, w.FS.Paths()) || len(w.Services.Calls) > 0 {
		t.Errorf("dry run changed the host")
	}
}

// Reset's bounds judge every spelling of a path as Windows reads it: a
// device-path prefix or trailing dots and spaces do not move a file out of
// the node's directories or into them, and a name only the disk could
// place (a short name, a stream, a device) is never judged inside.
func TestResetBoundsJudgeEverySpelling(t *testing.T) {
	w := hosttest.NewWorld(t)
	o := resetOptions(w)
	for p, want := range map[string]bool{
		`C:\etc\kubeedge\ca\rootCA.crt`:                        true,
		`\\?\C:\etc\kubeedge\ca\rootCA.crt`:                    true,
		`\\.\c:\ETC\kubeedge\ca\rootCA.crt`:                    true,
		`C:/etc/kubeedge./ca/rootCA.crt`:                       true,
		`C:\var\log\kubeedge \edgecore.log`:                    true,
		`C:\etc\kubeedge.\..\Windows\System32\config\SAM`:      false,
		`\\?\C:\Windows\System32\config\SAM`:                   false,
		`C:\etc\kubeedge.old\x`:                                false,
		`C:\etc\KUBEED~1\ca\rootCA.crt`:                        false,
		`C:\etc\kubeedge\PROGRA~1\x`:                           false,
		`C:\etc\kubeedge\ca::$INDEX_ALLOCATION\x`:              false,
		`\\.\HarddiskVolume3\etc\kubeedge\x`:                   false,
		`\\?\GLOBALROOT\Device\HarddiskVolume3\etc\kubeedge\x`: false,
	} {
		if got := reset.Inside(o, w.System(), p); got != want {
			t.Errorf("inside(%s) = %v, want %v", p, got, want)
		}
	}
}

// A --config spelled with a device prefix or a trailing dot is the node's
// configuration; one in a look-alike folder (C:\etc\kubeedge with a
// trailing space, which Windows keeps when made through \\?\) is not
// removed for it.
func TestResetReadsAndRemovesTheConfigurationInItsCanonicalForm(t *testing.T) {
	for _, spelled := range []string{`\\?\C:\etc\kubeedge\config\edgecore.yaml`, `C:\etc\kubeedge.\config\edgecore.yaml`, `C:\etc\kubeedge \config\edgecore.yaml`} {
		t.Run(spelled, func(t *testing.T) {
			w := joined(t)
			w.FS.AddFile(spelled, w.FS.Content(hosttest.CfgFile))
			o := resetOptions(w)
			o.ConfigFile = spelled
			var out bytes.Buffer
			if err := reset.Run(context.Background(), nil, &out, false, o, w.System()); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			hosttest.MustContain(t, "output", out.String(), `removed `+hosttest.CfgFile)
			if w.FS.Has(hosttest.CfgFile) {
				t.Errorf("the node's configuration %s was not removed", hosttest.CfgFile)
			}
			if strings.Contains(spelled, ` \`) && !w.FS.Has(spelled) {
				t.Errorf("reset removed %s, the file of a look-alike folder", spelled)
			}
		})
	}
}

// reset gives the folders the node restricted that existed before it back
// the owner and ACL they had, where they are empty; a folder that still
// holds what the node wrote there keeps the node's ACL and is named with
// the command that restores it; the record goes with the node.
func TestResetGivesFoldersBackTheirACLs(t *testing.T) {
	w := joined(t)
	const before = "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
	w.ACLRecord = `C:\etc\kubeedge\acl-record.json`
	w.SDDL = map[string]string{}
	w.FS.AddDir(`D:\data`)
	w.FS.AddFile(w.ACLRecord, `{"changed": [{"path": "D:\\data", "sddl": "`+before+`"}, {"path": "C:\\var\\lib\\kubelet", "sddl": "`+before+`"}, {"path": "C:\\etc\\kubeedge", "sddl": "`+before+`"}]}`)
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if want := []string{`D:\data ` + before}; !reflect.DeepEqual(w.Restored, want) {
		t.Errorf("gave back %v, want %v", w.Restored, want)
	}
	hosttest.MustContain(t, "output", out.String(), "give folders back their access control lists",
		`D:\data: given back the owner and access control list it had before edgecore restricted it`,
		`C:\var\lib\kubelet keeps the node's access control list`, "holds 2 entries (pods, volumeplugins)",
		`$a.SetSecurityDescriptorSddlForm('`+before+`')`)
	if strings.Contains(out.String(), `C:\etc\kubeedge keeps`) {
		t.Errorf("reset named the kubeedge directory it removes:\n%s", out.String())
	}
	if w.FS.Has(w.ACLRecord) {
		t.Errorf("%s is left behind", w.ACLRecord)
	}
}
