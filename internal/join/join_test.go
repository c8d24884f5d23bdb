package join_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// stepError fails the test unless err is join's failure at step index.
func stepError(t *testing.T, err error, index int) *steps.StepError {
	t.Helper()
	return hosttest.StepError(t, err, index, join.NumJoinSteps)
}

// noSecretOnDisk fails if any file of the host holds the token's secret.
func noSecretOnDisk(t *testing.T, w *hosttest.World) {
	t.Helper()
	for _, p := range w.FS.Paths() {
		if strings.Contains(w.FS.Content(p), hosttest.TokenSecret) {
			t.Errorf("the join token is still on disk in %s", p)
		}
	}
}

func TestJoinSucceedsAndLeavesNoTokenOnDisk(t *testing.T) {
	for _, edgecoreBlanks := range []bool{true, false} {
		t.Run(fmt.Sprintf("edgecore blanks the token: %v", edgecoreBlanks), func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.EdgecoreIssues(edgecoreBlanks)
			var out bytes.Buffer
			if err := join.Run(context.Background(), &out, w.Options(), w.System()); err != nil {
				t.Fatalf("join failed: %v\n%s", err, out.String())
			}
			got := out.String()
			if lines := hosttest.StepLines(got); !reflect.DeepEqual(lines, hosttest.JoinStepNames) {
				t.Errorf("steps printed:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(hosttest.JoinStepNames, "\n"))
			}
			hosttest.MustContain(t, "output", got,
				"Joining node line3-pc to cloudcore at 192.168.50.10:10000",
				"cloudcore answers at 192.168.50.10:10000 and 192.168.50.10:10002",
				`created C:\etc\kubeedge`+"\n",
				`wrote C:\etc\kubeedge\config\edgecore.yaml`,
				`C:\etc\kubeedge: SYSTEM and Administrators only`,
				`C:\var\log\kubeedge: SYSTEM and Administrators only`,
				`installed service "edgecore": "C:\Program Files\edgecore\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`,
				`certificates issued: C:\etc\kubeedge\certs\server.crt, C:\etc\kubeedge\certs\server.key`,
				`token removed from C:\etc\kubeedge\config\edgecore.yaml`,
				"edgehub connected to cloudcore at 192.168.50.10:10000",
				"Node line3-pc joined cloudcore at 192.168.50.10:10000.",
				"At a host shutdown the node first stops its pods by priority, within 30s (modules.edged.tailoredKubeletConfig.shutdownGracePeriod).",
				"Next, on the cloud side: kubectl get node line3-pc",
			)
			if !reflect.DeepEqual(w.Reached, []string{"192.168.50.10:10000", "192.168.50.10:10002", "192.168.50.10:10004"}) {
				t.Errorf("checked cloudcore at %v", w.Reached)
			}
			// Every directory of the node: the kubelet's root holds
			// secret volumes, the database cached Secrets.
			if want := []string{`C:\etc\kubeedge`, `C:\var\lib\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log\pods`, `C:\var\log\kubeedge`}; !reflect.DeepEqual(w.ACL, want) {
				t.Errorf("restricted %v, want %v", w.ACL, want)
			}
			svc, ok := w.Services.Configs["edgecore"]
			if !ok || !w.Services.Running["edgecore"] {
				t.Fatalf("service not installed and running: %v", w.Services.Calls)
			}
			if svc.Executable != hosttest.Exe || !reflect.DeepEqual(svc.Args, []string{"--config", hosttest.CfgFile}) || svc.StartType != service.StartAutomatic {
				t.Errorf("service config %+v", svc)
			}
			// The written configuration stops the pods for up to 30 s at
			// a host shutdown; Windows waits for that and edgecore's stop.
			if svc.PreShutdownTimeout != 70*time.Second {
				t.Errorf("service pre-shutdown time-out %v, want 70s", svc.PreShutdownTimeout)
			}
			cfg := w.FS.Content(hosttest.CfgFile)
			hosttest.MustContain(t, "config", cfg, "hostnameOverride: line3-pc", "site: plant-1", `token: ""`, "server: 192.168.50.10:10000",
				"shutdownGracePeriod: 30s", "shutdownGracePeriodCriticalPods: 10s", "WindowsGracefulNodeShutdown: true")
			noSecretOnDisk(t, w)
			if joinRemoved := len(w.RemovedToken) > 0; joinRemoved == edgecoreBlanks {
				t.Errorf("join called RemoveToken %v; edgecore blanked it itself: %v", w.RemovedToken, edgecoreBlanks)
			}
			for _, d := range []string{`C:\var\lib\kubeedge`, `C:\var\lib\kubelet`, `C:\etc\kubeedge\ca`, `C:\etc\kubeedge\certs`, `C:\var\log\kubeedge`} {
				if !w.FS.Has(d) {
					t.Errorf("%s was not created", d)
				}
			}
		})
	}
}

func TestJoinRefusesAParentAnotherAccountOwnsBeforeWritingTheToken(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.FS.AddDir(`C:\etc`)
	w.SDDL = map[string]string{`C:\etc`: "O:S-1-5-21-1-2-3-1001D:AI(A;OICI;FA;;;S-1-5-21-1-2-3-1001)"}
	before := w.FS.Paths()
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, w.Options(), w.System())
	hosttest.MustContain(t, "error", fmt.Sprint(err), "step 3/9 (check for an earlier installation)",
		`C:\etc (the configuration, join token, node key and certificates, backups and upgrade journal) is a parent owned by S-1-5-21-1-2-3-1001`,
		`takeown /F "C:\etc" /A`)
	if after := w.FS.Paths(); !reflect.DeepEqual(after, before) || len(w.ACL) != 0 {
		t.Errorf("join changed the host before refusing: %v -> %v, restricted %v", before, after, w.ACL)
	}
	noSecretOnDisk(t, w)
}

func TestJoinRefusesAnExecutableUsersMayReplace(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.FS.AddDir(`C:\Program Files\edgecore`)
	w.SDDL = map[string]string{`C:\Program Files\edgecore`: "O:BAD:AI(A;OICIID;FA;;;BA)(A;OICIID;0x1301bf;;;BU)"}
	err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System())
	hosttest.MustContain(t, "error", fmt.Sprint(err), `C:\Program Files\edgecore (the directory of the edgecore.exe the service runs) is writable by others: BUILTIN\Users may change or delete`,
		"copy edgecore.exe into a directory only administrators may change")
	if _, ok := w.Services.Configs["edgecore"]; ok {
		t.Error("the service was installed")
	}
}

func TestJoinDryRunChangesNothing(t *testing.T) {
	w := hosttest.NewWorld(t)
	before := w.FS.Paths()
	o := w.Options()
	o.DryRun = true
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	lines := hosttest.StepLines(got)
	if len(lines) != join.NumJoinSteps {
		t.Fatalf("dry run printed %d steps:\n%s", len(lines), got)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, hosttest.JoinStepNames[i]+": ") {
			t.Errorf("line %d is %q, want %q and a description", i+1, l, hosttest.JoinStepNames[i])
		}
	}
	hosttest.MustContain(t, "dry run", got,
		"Dry run: edgecore.exe join would do the following; nothing is changed.",
		"check that cloudcore answers at 192.168.50.10:10000 (hub) and 192.168.50.10:10002 (certificates)",
		`create those missing of C:\etc\kubeedge, C:\etc\kubeedge\config, C:\var\lib\kubeedge`,
		`C:\var\log\kubeedge`,
		`allow only SYSTEM and Administrators into C:\etc\kubeedge`,
		`running "C:\Program Files\edgecore\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`,
		"wait up to 2m0s",
	)
	if len(w.FS.Changes) > 0 || len(w.Services.Calls) > 0 || len(w.ACL) > 0 || len(w.Reached) > 0 {
		t.Errorf("dry run acted: files %v, services %v, ACL %v, dialled %v", w.FS.Changes, w.Services.Calls, w.ACL, w.Reached)
	}
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("dry run changed the file system: %v -> %v", before, after)
	}
}

// A refused token is the failure an operator meets most: edgecore logs it
// and exits; join must name it, say how to get a new token, and leave the
// host as it found it apart from the log that explains it.
func TestJoinTokenRefusedRollsBack(t *testing.T) {
	for name, tc := range map[string]struct {
		line  string
		wants []string
	}{
		"rejected": {hosttest.LogLineRefused, []string{"cloudcore rejected the token", "code: 401", "fix: the token is wrong or has expired", "run `keadm gettoken` on the cloud side"}},
		"other CA": {hosttest.LogLineWrongCA, []string{"the token does not belong to this cloudcore", "fix: run `keadm gettoken` against the cluster of this cloudcore"}},
	} {
		t.Run(name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.FS.AddDir(`C:\etc`)
			before := w.FS.Paths()
			w.EdgecoreLogs(tc.line)
			var out bytes.Buffer
			err := join.Run(context.Background(), &out, w.Options(), w.System())
			se := stepError(t, err, 9)
			if se.Step != join.StepWait {
				t.Errorf("step %q", se.Step)
			}
			hosttest.MustContain(t, "error", err.Error(), tc.wants...)
			hosttest.MustContain(t, "error", err.Error(), "join failed at step 9/9 (wait for certificates and the hub connection)",
				"rolled back: install and start the service, write the configuration, create directories")
			if len(se.UndoErrs) > 0 {
				t.Errorf("rollback failed: %v", se.UndoErrs)
			}
			hosttest.MustContain(t, "output", out.String(), "Rolling back:",
				"  undo [8/9] install and start the service",
				`stopped and removed service "edgecore"`,
				`removed C:\var\lib\kubeedge\edgecore.db`,
				`removed C:\etc\kubeedge\config\edgecore.yaml`,
				`removed C:\etc\kubeedge`+"\n",
				`kept C:\var\log\kubeedge: it holds edgecore's log of this attempt`)
			if len(w.Services.Configs) != 0 {
				t.Errorf("service left installed")
			}
			// Everything join made is gone but the log and the
			// directories above it.
			want := append(append([]string(nil), before...), `C:\var`, `C:\var\log`, `C:\var\log\kubeedge`, hosttest.LogFile)
			if after := w.FS.Paths(); !sameSet(after, want) {
				t.Errorf("after rollback the host has\n%v\nwant\n%v", after, want)
			}
			noSecretOnDisk(t, w)
		})
	}
}

// KubeEdge v1.23 panics where v1.20 logged and exited: the refusal is in
// panic.log, not in the log file, and join must still name it at once.
func TestJoinTokenRefusedInThePanicLog(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecorePanics(hosttest.PanicRefused)
	var out bytes.Buffer
	start := w.Clock.Now()
	err := join.Run(context.Background(), &out, w.Options(), w.System())
	se := stepError(t, err, 9)
	if se.Step != join.StepWait {
		t.Errorf("step %q", se.Step)
	}
	hosttest.MustContain(t, "error", err.Error(), "cloudcore rejected the token", "code: 401", "run `keadm gettoken` on the cloud side",
		"rolled back: install and start the service, write the configuration, create directories")
	if waited := w.Clock.Now().Sub(start); waited > time.Minute {
		t.Errorf("join waited %v for a failure edgecore reported after 2 s", waited)
	}
	if len(w.Services.Configs) != 0 {
		t.Errorf("service left installed")
	}
}

// A panic log an earlier attempt left behind says nothing about this one.
func TestJoinIgnoresAnEarlierPanicLog(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.FS.AddDir(`C:\var\log\kubeedge`)
	w.FS.AddFile(hosttest.PanicFile, hosttest.PanicRefused)
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, w.Options(), w.System()); err != nil {
		t.Fatalf("join failed on the earlier attempt's panic log: %v\n%s", err, out.String())
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestJoinFailuresBeforeAnyChange(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(*hosttest.World)
		step  int
		wants []string
	}{
		"cloudcore unreachable": {
			setup: func(w *hosttest.World) { w.Reach["192.168.50.10:10002"] = errors.New("connection refused") },
			step:  1,
			wants: []string{"cloudcore does not answer on its certificate port 192.168.50.10:10002: connection refused",
				"fix: check that cloudcore runs", "open in the firewalls of both hosts"},
		},
		"not Administrator": {
			setup: func(w *hosttest.World) { w.Elevated = false },
			step:  2,
			wants: []string{"not running as Administrator", `fix: open PowerShell with "Run as administrator" and run the same command there`},
		},
		"cannot tell elevation": {
			setup: func(w *hosttest.World) { w.ElevErr = errors.New("not supported on linux") },
			step:  2,
			wants: []string{"cannot tell whether this process runs as Administrator: not supported on linux", "fix: run join on the Windows host"},
		},
		"service already installed": {
			setup: func(w *hosttest.World) { w.Services.Configs["edgecore"] = service.Config{Name: "edgecore"} },
			step:  3,
			wants: []string{`the service "edgecore" is already installed`, "fix: remove the earlier installation with `edgecore.exe reset`", "`edgecore.exe service uninstall`"},
		},
		"certificates of an earlier join": {
			setup: func(w *hosttest.World) { w.FS.AddFile(hosttest.CertFile, "OLD") },
			step:  3,
			wants: []string{`the node certificate of an earlier join exists: C:\etc\kubeedge\certs\server.crt`, "`edgecore.exe reset`"},
		},
		"configuration exists": {
			setup: func(w *hosttest.World) { w.FS.AddFile(hosttest.CfgFile, "kind: EdgeCore\n") },
			step:  3,
			wants: []string{`the configuration exists: C:\etc\kubeedge\config\edgecore.yaml`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			tc.setup(w)
			before := w.FS.Paths()
			var out bytes.Buffer
			err := join.Run(context.Background(), &out, w.Options(), w.System())
			se := stepError(t, err, tc.step)
			hosttest.MustContain(t, "error", err.Error(), tc.wants...)
			if len(se.RolledBack) > 0 || strings.Contains(out.String(), "Rolling back") {
				t.Errorf("nothing was done, yet something was rolled back: %v\n%s", se.RolledBack, out.String())
			}
			if lines := hosttest.StepLines(out.String()); len(lines) != tc.step {
				t.Errorf("printed steps %v, want the first %d", lines, tc.step)
			}
			if len(w.FS.Changes) > 0 || len(w.Services.Calls) > 0 || len(w.ACL) > 0 {
				t.Errorf("changed the host: %v %v %v", w.FS.Changes, w.Services.Calls, w.ACL)
			}
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
				t.Errorf("file system changed: %v -> %v", before, after)
			}
		})
	}
}

func TestJoinServiceFailuresRollBackToTheHostAsFound(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(*hosttest.World)
		wants []string
	}{
		"installed meanwhile": {
			setup: func(w *hosttest.World) {
				w.Services.InstallErr = fmt.Errorf("install service %q: the service is %w", "edgecore", service.ErrAlreadyInstalled)
			},
			wants: []string{"already installed", "fix: remove the earlier installation with `edgecore.exe reset`"},
		},
		"access denied": {
			setup: func(w *hosttest.World) {
				w.Services.InstallErr = fmt.Errorf("install service %q: %w", "edgecore", service.ErrAccessDenied)
			},
			wants: []string{"access denied", `fix: open PowerShell with "Run as administrator"`},
		},
		"stops while starting": {
			setup: func(w *hosttest.World) {
				w.Services.StartErr = errors.New(`start service "edgecore": it stopped while starting (exit code 1)`)
			},
			wants: []string{"it stopped while starting", `fix: the service stopped while starting: read C:\var\log\kubeedge\edgecore.log`},
		},
		// A refused token ends edgecore within milliseconds, so the start
		// itself fails; the log, not the start, says why.
		"token refused while starting": {
			setup: func(w *hosttest.World) {
				w.Services.StartErr = errors.New(`start service "edgecore": it stopped while starting (exit code 1)`)
				w.Services.OnStart = func() { w.FS.AppendFile(hosttest.LogFile, hosttest.LogLineRefused) }
			},
			wants: []string{"cloudcore rejected the token", "fix: the token is wrong or has expired", "keadm gettoken"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			// A database kept by `reset --keep-data` and an existing log
			// directory are the operator's and must survive.
			w.FS.AddFile(hosttest.DBFile, "KEPT")
			w.FS.AddFile(hosttest.LogFile, "old log\n")
			w.FS.AddDir(`C:\etc`)
			before := w.FS.Paths()
			tc.setup(w)
			var out bytes.Buffer
			err := join.Run(context.Background(), &out, w.Options(), w.System())
			stepError(t, err, 8)
			hosttest.MustContain(t, "error", err.Error(), tc.wants...)
			hosttest.MustContain(t, "error", err.Error(), "rolled back: install and start the service, write the configuration, create directories")
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
				t.Errorf("after rollback the host has\n%v\nwant\n%v", after, before)
			}
			if w.FS.Content(hosttest.DBFile) != "KEPT" {
				t.Errorf("the kept database was touched")
			}
			if len(w.Services.Configs) != 0 {
				t.Errorf("service left installed")
			}
		})
	}
}

func TestJoinTimesOutNamingWhatIsMissing(t *testing.T) {
	w := hosttest.NewWorld(t)
	// An earlier attempt's log says the hub connected and a token was
	// refused; neither is about this attempt.
	w.FS.AddFile(hosttest.LogFile, hosttest.LogLineConnected+hosttest.LogLineRefused)
	w.Services.OnStart = func() {
		w.Clock.After(time.Second, func() { w.FS.AppendFile(hosttest.LogFile, hosttest.LogLineNoHub) })
	}
	o := w.Options()
	o.Timeout = 30 * time.Second
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, o, w.System())
	stepError(t, err, 9)
	hosttest.MustContain(t, "error", err.Error(),
		"not ready after 30s",
		`the node certificates were not issued (C:\etc\kubeedge\certs\server.crt does not exist)`,
		"edgehub did not connect to cloudcore at 192.168.50.10:10000 (last attempt: connection failed: dial tcp 192.168.50.10:10000: i/o timeout",
		`fix: check that this host reaches cloudcore at 192.168.50.10:10000, read C:\var\log\kubeedge\edgecore.log`)
	hosttest.MustContain(t, "output", out.String(), "still waiting for the certificates and the hub connection (15s of 30s)")
	if strings.Contains(err.Error(), "rejected") {
		t.Errorf("took the earlier attempt's log for this one: %v", err)
	}
}

func TestJoinWaitsForTheHubAfterTheCertificates(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Services.OnStart = func() {
		w.Clock.After(2*time.Second, func() {
			w.FS.AddFile(hosttest.CertFile, "CERT")
			w.FS.AddFile(hosttest.KeyFile, "KEY")
		})
	}
	o := w.Options()
	o.Timeout = 20 * time.Second
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, o, w.System())
	stepError(t, err, 9)
	hosttest.MustContain(t, "error", err.Error(), "edgehub did not connect")
	if strings.Contains(err.Error(), "certificates were not issued") || strings.Contains(err.Error(), "token may still") {
		t.Errorf("named a condition that was met: %v", err)
	}
	// The certificates existed, so join took the token out before giving
	// up; the rollback then removed the file and the certificates.
	hosttest.MustContain(t, "output", out.String(), "token removed from")
	if w.FS.Has(hosttest.CertFile) || w.FS.Has(hosttest.CfgFile) {
		t.Errorf("certificates or configuration left behind")
	}
	noSecretOnDisk(t, w)
}

func TestJoinInterruptedRollsBack(t *testing.T) {
	w := hosttest.NewWorld(t)
	before := w.FS.Paths()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.Clock.Cancel = cancel
	w.Clock.CancelAt = w.Clock.Now().Add(3 * time.Second)
	var out bytes.Buffer
	err := join.Run(ctx, &out, w.Options(), w.System())
	stepError(t, err, 9)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error does not say it was interrupted: %v", err)
	}
	hosttest.MustContain(t, "error", err.Error(), "interrupted while waiting", "fix: run the same join command again")
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("after rollback the host has %v, want %v", after, before)
	}
}

func TestJoinReportsWhatItCouldNotRollBack(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreLogs(hosttest.LogLineRefused)
	w.Services.UninstallErr = fmt.Errorf(`uninstall service "edgecore": %w after 45s waiting for it to be stopped`, service.ErrTimeout)
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, w.Options(), w.System())
	se := stepError(t, err, 9)
	if len(se.UndoErrs) != 1 {
		t.Fatalf("undo errors %v", se.UndoErrs)
	}
	hosttest.MustContain(t, "error", err.Error(),
		"not rolled back, clean up by hand: undo of step 8 (install and start the service): uninstall service \"edgecore\": timed out",
		"rolled back: write the configuration, create directories")
	if w.FS.Has(hosttest.CfgFile) {
		t.Errorf("the other steps were not undone")
	}
}

func TestJoinRefusesBadInputsNamingEachFlag(t *testing.T) {
	w := hosttest.NewWorld(t)
	o := w.Options()
	o.Token = "not-a-token"
	o.Timeout = 0
	o.ConfigFile = `edgecore.yaml`
	o.Set = []string{"modules.edged.tailoredKubeletConfig.maxpods=50"}
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, o, w.System())
	se := stepError(t, err, 1)
	if se.Step != join.StepValidate {
		t.Errorf("step %q", se.Step)
	}
	hosttest.MustContain(t, "error", err.Error(),
		"--token", "not a KubeEdge join token",
		"--timeout", "for example 5m",
		"--config", "give an absolute path",
		"--set", `did you mean "maxPods"?`)
	if strings.Contains(err.Error(), hosttest.TokenSecret) {
		t.Errorf("error shows a token")
	}
	if out.Len() > 0 || len(w.Reached) > 0 || len(w.FS.Changes) > 0 {
		t.Errorf("acted on bad input: %q %v %v", out.String(), w.Reached, w.FS.Changes)
	}
}

func TestJoinRefusesPathsOutsideTheProtectedDirectory(t *testing.T) {
	w := hosttest.NewWorld(t)
	o := w.Options()
	o.ConfigFile = `D:\edge\edgecore.yaml`
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), `--config: Invalid value: "D:\\edge\\edgecore.yaml": keep the configuration under C:\etc\kubeedge`)

	o = w.Options()
	o.Set = []string{`modules.edgeHub.tlsPrivateKeyFile=D:\keys\server.key`}
	err = join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), `--set modules.edgeHub.tlsPrivateKeyFile: Invalid value: "D:\\keys\\server.key"`, `keep the node's key and certificates under C:\etc\kubeedge`)
}

func TestJoinAppliesSetToTheWrittenConfiguration(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(true)
	o := w.Options()
	o.Set = []string{"modules.edged.tailoredKubeletConfig.maxPods=50", "modules.edged.nodeLabels.line=3",
		"modules.edged.tailoredKubeletConfig.rootDirectory=C:/var/lib/kubelet"}
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, o, w.System())
	if err == nil {
		t.Fatalf("a misplaced field was accepted")
	}
	hosttest.MustContain(t, "error", err.Error(), `modules.edged.tailoredKubeletConfig has no field "rootDirectory"`)

	o.Set = []string{"modules.edged.tailoredKubeletConfig.maxPods=50", "modules.edged.nodeLabels.line=3",
		"modules.edged.rootDirectory=D:/kubelet"}
	out.Reset()
	w.FS.AddDir(`D:\`)
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	cfg := w.FS.Content(hosttest.CfgFile)
	hosttest.MustContain(t, "config", cfg, "maxPods: 50", `line: "3"`, "site: plant-1", `rootDirectory: D:\kubelet`)
	hosttest.MustContain(t, "output", out.String(), `modules.edged.rootDirectory: written as D:\kubelet (given as D:/kubelet)`, `created D:\kubelet`)
}

// A host shutdown waits for the grace periods the --set values give.
func TestJoinSetsThePreShutdownTimeOutFromTheSetValues(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(true)
	o := w.Options()
	o.Set = []string{"modules.edged.tailoredKubeletConfig.shutdownGracePeriod=2m", "modules.edged.tailoredKubeletConfig.shutdownGracePeriodCriticalPods=20s"}
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := w.Services.Configs["edgecore"].PreShutdownTimeout; got != 160*time.Second {
		t.Errorf("pre-shutdown time-out %v, want 160s for 2m of node shutdown", got)
	}
}

func TestJoinRefusesSetThatBreaksAWindowsRule(t *testing.T) {
	w := hosttest.NewWorld(t)
	o := w.Options()
	o.Set = []string{"modules.edged.windowsPriorityClass=FOO"}
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), "windowsPriorityClass", "NORMAL_PRIORITY_CLASS")
}

func TestJoinPlanHasTheDeclaredNumberOfSteps(t *testing.T) {
	w := hosttest.NewWorld(t)
	j, err := join.New(w.Options(), w.System())
	if err != nil {
		t.Fatal(err)
	}
	p := j.Plan()
	if len(p.Steps) != join.NumJoinSteps {
		t.Fatalf("%d steps, errors say %d", len(p.Steps), join.NumJoinSteps)
	}
	for i, s := range p.Steps {
		if want := strings.SplitN(hosttest.JoinStepNames[i], "] ", 2)[1]; s.Name != want {
			t.Errorf("step %d is %q, want %q", i+1, s.Name, want)
		}
	}
}

// If the token cannot be taken out of the file, join fails rather than
// report a node whose disk still holds it, and the rollback removes the
// file.
func TestJoinFailsWhenTheTokenStaysOnDisk(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(false)
	sys := w.System()
	sys.RemoveToken = func(path string) error {
		return fmt.Errorf("remove token from %s: Access is denied.", path)
	}
	o := w.Options()
	o.Timeout = 20 * time.Second
	err := join.Run(context.Background(), &bytes.Buffer{}, o, sys)
	stepError(t, err, 9)
	hosttest.MustContain(t, "error", err.Error(),
		`the join token may still be in C:\etc\kubeedge\config\edgecore.yaml (remove token from C:\etc\kubeedge\config\edgecore.yaml: Access is denied.)`)
	if strings.Contains(err.Error(), "did not connect") || strings.Contains(err.Error(), "were not issued") {
		t.Errorf("named a condition that was met: %v", err)
	}
	noSecretOnDisk(t, w)
}

// cloudcore's QUIC hub answers on UDP only: join must not refuse a QUIC
// cloud because a TCP dial of that port finds nobody.
func TestJoinQUICChecksOnlyTheCertificatePortOverTCP(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Reach["192.168.50.10:10001"] = errors.New("connection refused")
	o := w.Options()
	o.CloudCoreIPPort = "192.168.50.10:10001"
	o.HubProtocol = "quic"
	j, err := join.New(o, w.System())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := j.Validate(context.Background(), &out); err != nil {
		t.Fatalf("a QUIC join was refused: %v", err)
	}
	if !reflect.DeepEqual(w.Reached, []string{"192.168.50.10:10002", "192.168.50.10:10004"}) {
		t.Errorf("checked cloudcore over TCP at %v, want only the certificate and stream tunnel ports", w.Reached)
	}
	hosttest.MustContain(t, "output", out.String(), "QUIC hub 192.168.50.10:10001 (UDP) is checked when the node connects")
}

// A cloud without cloudStream: join stops before changing anything, and
// says how to turn the tunnel on or to go without it; with --stream=false
// the port is not asked and the node's edgeStream is off.
func TestJoinTunnel(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Reach["192.168.50.10:10004"] = errors.New("connection refused")
	j, err := join.New(w.Options(), w.System())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = j.Validate(context.Background(), &out)
	if err == nil {
		t.Fatal("joined a cloud whose stream tunnel does not answer")
	}
	fix := steps.Fix(err)
	if fix == "" {
		t.Fatalf("%v carries no fix", err)
	}
	hosttest.MustContain(t, "error", err.Error()+" "+fix,
		"stream tunnel port 192.168.50.10:10004", "connection refused", "modules.cloudStream.enable: true", "--stream=false")

	w = hosttest.NewWorld(t)
	w.Reach["192.168.50.10:10004"] = errors.New("connection refused")
	o := w.Options()
	o.NoStream = true
	if j, err = join.New(o, w.System()); err != nil {
		t.Fatal(err)
	}
	if err := j.Validate(context.Background(), &out); err != nil {
		t.Fatalf("--stream=false still checked the tunnel: %v", err)
	}
	if j.Config().Modules.EdgeStream.Enable {
		t.Error("--stream=false left edgeStream on")
	}
}

// indexOf is the position of the first change that starts with prefix,
// or -1.
func indexOf(changes []string, prefix string) int {
	for i, c := range changes {
		if strings.HasPrefix(c, prefix) {
			return i
		}
	}
	return -1
}

// The token is written into a directory that is already restricted, so
// the file is restricted from its first byte; every directory join makes
// is protected from its creation; and the certificate directory edgehub
// writes the node's key into at its first start is one of them.
func TestJoinRestrictsBeforeAnySecretIsWritten(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, w.Options(), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	write := indexOf(w.FS.Changes, "write "+hosttest.CfgFile)
	if write < 0 {
		t.Fatalf("the configuration was not written: %v", w.FS.Changes)
	}
	for _, d := range []string{`C:\etc\kubeedge`, `C:\var\lib\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log\pods`, `C:\var\log\kubeedge`} {
		if r := indexOf(w.FS.Changes, "restrict "+d); r < 0 || r > write {
			t.Errorf("%s restricted at change %d, the token written at %d:\n%s", d, r, write, strings.Join(w.FS.Changes, "\n"))
		}
	}
	for dir, want := range map[string]string{
		`C:\etc`: acl.ParentSDDL, `C:\var`: acl.ParentSDDL, `C:\var\lib`: acl.ParentSDDL, `C:\var\log`: acl.ParentSDDL,
		`C:\etc\kubeedge`: acl.DirectorySDDL, `C:\var\lib\kubelet`: acl.DirectorySDDL, `C:\var\log\kubeedge`: acl.DirectorySDDL,
		// Inside a restricted directory: what it inherits.
		`C:\etc\kubeedge\config`: "", `C:\etc\kubeedge\certs`: "", `C:\var\lib\kubelet\volumeplugins`: "",
	} {
		if got, ok := w.Made[dir]; !ok || got != want {
			t.Errorf("%s created with %q (created: %v), want %q", dir, got, ok, want)
		}
	}
}

// On Windows 10 and 11, a folder made in C:\ with C:\'s ACL lets
// Authenticated Users rename it: join makes its own parents so that no
// one else may, and they pass the check of the next join step.
func TestJoinOnAClientEditionMakesParentsOthersMayNotRename(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.ClientEdition = true
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, w.Options(), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
}

// A parent an administrator made earlier with C:\'s ACL on a client
// edition is refused before anything changes, with the command that
// takes the others' rights away.
func TestJoinRefusesAParentOthersMayRenameBeforeWritingTheToken(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.ClientEdition = true
	w.FS.AddDir(`C:\etc`)
	before := w.FS.Paths()
	err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System())
	stepError(t, err, 3)
	hosttest.MustContain(t, "error", fmt.Sprint(err),
		`C:\etc (the configuration, join token, node key and certificates, backups and upgrade journal) is a parent that others may rename or empty: Authenticated Users has 0x1301bf`,
		`icacls "C:\etc" /inheritance:d`, `icacls "C:\etc" /remove:g *S-1-5-11`)
	if after := w.FS.Paths(); !reflect.DeepEqual(after, before) || len(w.ACL) != 0 {
		t.Errorf("join changed the host before refusing: %v -> %v, restricted %v", before, after, w.ACL)
	}
}

// With access restricted before the configuration, a configuration that
// does not load back still undoes its write and the directories join
// made, as before.
func TestJoinUndoesTheConfigurationAfterRestricting(t *testing.T) {
	w := hosttest.NewWorld(t)
	before := w.FS.Paths()
	sys := w.System()
	sys.LoadConfig = func(path string) (*v1alpha2.EdgeCoreConfig, error) {
		return nil, errors.New("modules.edged.tailoredKubeletConfig.maxPods: Invalid value")
	}
	err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), sys)
	stepError(t, err, 6)
	hosttest.MustContain(t, "error", err.Error(), "rolled back: write the configuration, create directories")
	if len(w.ACL) == 0 {
		t.Error("nothing was restricted before the configuration was written")
	}
	if after := w.FS.Paths(); !reflect.DeepEqual(after, before) {
		t.Errorf("after rollback the host has %v, want %v", after, before)
	}
}

// The image archives are imported before the service starts, from the
// release's folder and the kubeedge directory's, into the containerd the
// configuration names; a failed import stops the join and undoes it.
func TestJoinImportsImagesBeforeTheServiceStarts(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, w.Options(), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	want := `npipe://./pipe/containerd-containerd C:\Program Files\edgecore\images;C:\etc\kubeedge\images service installed: false`
	if len(w.Imports) != 1 || w.Imports[0] != want {
		t.Errorf("imports %q, want %q", w.Imports, want)
	}

	w = hosttest.NewWorld(t)
	w.ImportErr = errors.New(`image archive C:\etc\kubeedge\images\pause.tar: not a readable tar file`)
	out.Reset()
	err := join.Run(context.Background(), &out, w.Options(), w.System())
	se := stepError(t, err, 7)
	hosttest.MustContain(t, "error", se.Error(), "pause.tar: not a readable tar file")
	if len(w.Services.Configs) != 0 || w.FS.Has(`C:\etc\kubeedge\config\edgecore.yaml`) {
		t.Errorf("a failed import left the service or the configuration behind")
	}
}

// A join over folders someone left (keadm reset, an operator staging
// files) judges every entry below them before it writes the token or
// restricts anything: what another account planted, a link and a
// hard-linked file are each refused with their path; nothing is taken
// over.
func TestJoinRefusesPlantedEntriesBelowExistingFolders(t *testing.T) {
	const user = "O:S-1-5-21-1-2-3-1001D:AI(A;;FA;;;S-1-5-21-1-2-3-1001)"
	for name, tc := range map[string]struct {
		plant func(w *hosttest.World)
		want  []string
	}{
		"upgrade settings naming another repository": {func(w *hosttest.World) {
			w.FS.AddFile(`C:\etc\kubeedge\config\upgrade.yaml`, "repository: https://attacker.example/{version}.zip")
			w.SDDL[`C:\etc\kubeedge\config\upgrade.yaml`] = user
		}, []string{`C:\etc\kubeedge\config\upgrade.yaml (in C:\etc\kubeedge, `, "is owned by S-1-5-21-1-2-3-1001", `takeown /F "C:\etc\kubeedge\config\upgrade.yaml" /A`}},
		"an unfinished upgrade journal": {func(w *hosttest.World) {
			w.FS.AddFile(`C:\etc\kubeedge\upgrade\journal.json`, "{}")
			w.SDDL[`C:\etc\kubeedge\upgrade\journal.json`] = user
		}, []string{`C:\etc\kubeedge\upgrade\journal.json (in C:\etc\kubeedge, `, "is owned by S-1-5-21-1-2-3-1001"}},
		"a static pod": {func(w *hosttest.World) {
			w.FS.AddFile(`C:\etc\kubeedge\manifests\miner.yaml`, "kind: Pod")
			w.SDDL[`C:\etc\kubeedge\manifests\miner.yaml`] = user
		}, []string{`C:\etc\kubeedge\manifests\miner.yaml (in C:\etc\kubeedge, `}},
		"a flexvolume driver in the kubelet's root": {func(w *hosttest.World) {
			w.FS.AddFile(`C:\var\lib\kubelet\volumeplugins\evil~driver\driver.exe`, "MZ")
			w.SDDL[`C:\var\lib\kubelet\volumeplugins\evil~driver`] = user
		}, []string{`C:\var\lib\kubelet\volumeplugins\evil~driver (in C:\var\lib\kubelet, `}},
		"a junction in place of the certificates": {func(w *hosttest.World) {
			w.FS.AddLink(`C:\etc\kubeedge\certs`)
		}, []string{`C:\etc\kubeedge\certs (in C:\etc\kubeedge, `, "which the service would follow", `cmd /c rmdir "C:\etc\kubeedge\certs"`}},
		"a hard-linked image archive": {func(w *hosttest.World) {
			w.FS.AddFile(`C:\etc\kubeedge\images\pause.tar`, "tar")
			w.Links[`C:\etc\kubeedge\images\pause.tar`] = 2
		}, []string{`C:\etc\kubeedge\images\pause.tar (in C:\etc\kubeedge, `, "is a file with 2 names (hard links)"}},
	} {
		t.Run(name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.Links = map[string]uint32{}
			w.SDDL = map[string]string{}
			tc.plant(w)
			before := w.FS.Paths()
			err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System())
			stepError(t, err, 3)
			hosttest.MustContain(t, "error", fmt.Sprint(err), tc.want...)
			if after := w.FS.Paths(); !reflect.DeepEqual(after, before) || len(w.ACL) != 0 {
				t.Errorf("join changed the host before refusing: %v -> %v, restricted %v", before, after, w.ACL)
			}
			noSecretOnDisk(t, w)
		})
	}
}

// What a previous node's pods wrote into their volumes, owned by a
// Windows container's account, is no reason to refuse a join over its
// kubelet root: the node neither runs nor trusts it.
func TestJoinOverAnEarlierKubeletRootLeavesPodVolumesAlone(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.SDDL = map[string]string{}
	vol := `C:\var\lib\kubelet\pods\0d3f\volumes\kubernetes.io~empty-dir\data\out.txt`
	w.FS.AddFile(vol, "x")
	w.SDDL[vol] = "O:S-1-5-93-2-1D:(A;;FA;;;S-1-5-93-2-1)"
	w.EdgecoreIssues(true)
	if err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System()); err != nil {
		t.Fatalf("join over an earlier kubelet root: %v", err)
	}
}
