package upgrade

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const driverPID = 100

// run executes the planned upgrade as the upgrade command (process 100,
// version v0.1.0) would.
func (h *host) run(t *testing.T, j *Journal) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	h.alive[driverPID] = true
	defer delete(h.alive, driverPID)
	r, err := Execute(context.Background(), &out, h.env(driverPID, "v0.1.0"), j)
	if err != nil {
		t.Fatalf("Execute: %v\n%s", err, out.String())
	}
	return r, out.String()
}

func (h *host) journal(t *testing.T) *Journal {
	t.Helper()
	j, err := loadJournal(h.env(1, "v0.1.0"))
	if err != nil || j == nil {
		t.Fatalf("journal: %v %v", j, err)
	}
	return j
}

func (h *host) must(t *testing.T, path, want string) {
	t.Helper()
	if got, ok := h.fs.get(path); !ok || got != want {
		t.Errorf("%s holds %q (exists %v), want %q", path, got, ok, want)
	}
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("output lacks %q:\n%s", l, out)
		}
	}
}

func TestUpgradeSucceeds(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	r, out := h.run(t, h.plannedUpgrade(e))
	if r.Status != StatusSuccess || r.ExitCode() != 0 {
		t.Fatalf("result %+v\n%s", r, out)
	}
	if got := r.Line(); got != "result=success action=upgrade from=v0.1.0 to=v0.2.0" {
		t.Errorf("result line %q", got)
	}
	h.must(t, h.exe, newBin)
	h.must(t, h.config, oldConfig)
	backup := `C:\etc\kubeedge\backup\v0.1.0`
	h.must(t, backup+`\edgecore.exe`, oldBin)
	h.must(t, backup+`\edgecore.yaml`, oldConfig)
	h.must(t, backup+`\edgecore.db`, oldDB)
	if _, err := readBackup(e, backup); err != nil {
		t.Errorf("the backup does not verify: %v", err)
	}
	if h.svc.st.State != service.Running || h.svc.running.version != "v0.2.0" {
		t.Errorf("service %v running %s", h.svc.st, h.svc.running.version)
	}
	j := h.journal(t)
	if !j.Done() || j.Outcome != OutcomeSuccess {
		t.Errorf("journal %+v", j)
	}
	for _, p := range []string{h.exe + ".new", h.exe + ".old", h.paths.Health} {
		if _, ok := h.fs.get(p); ok {
			t.Errorf("%s was left behind", p)
		}
	}
	wantLines(t, out,
		`Upgrading edgecore from v0.1.0 to v0.2.0 (service edgecore runs C:\Program Files\edge core\edgecore.exe)`,
		"[1/5] stop the service edgecore",
		`[2/5] back up C:\Program Files\edge core\edgecore.exe, C:\etc\kubeedge\config files\edgecore.yaml and C:\var\lib\kube edge\edgecore.db to C:\etc\kubeedge\backup\v0.1.0`,
		"      backup of v0.1.0 complete in",
		`[3/5] replace C:\Program Files\edge core\edgecore.exe with v0.2.0`,
		"[4/5] start the service edgecore and wait up to 3m0s",
		"      the service runs (process 4001)",
		"      edgehub connected to cloudcore (4s after the start)",
		"      the node reported Ready and the cloud accepted it",
		"      v0.2.0 keeps running (process 4001) 15s after it became healthy",
		"[5/5] clean up")
	if !containsOp(h.ops.log, `restrict C:\etc\kubeedge\backup`) {
		t.Errorf("the backup was not restricted to SYSTEM and Administrators: %v", h.ops.log)
	}
}

func containsOp(log []string, prefix string) bool {
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// The operator starts `edgecore.exe upgrade` from the installed binary:
// Windows lets it be renamed, not replaced.
func TestUpgradeRenamesTheRunningBinary(t *testing.T) {
	h := newHost(newBin)
	h.fs.pinned[key(h.exe)] = true
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusSuccess {
		t.Fatalf("result %+v\n%s", r, out)
	}
	h.must(t, h.exe, newBin)
	h.must(t, h.exe+".old", oldBin)
	wantLines(t, out, `was in use: the running binary was renamed to C:\Program Files\edge core\edgecore.exe.old`)
	if j := h.journal(t); j.Old != h.exe+".old" || j.Image != "" {
		t.Errorf("journal Old %q, Image %q", j.Old, j.Image)
	}
	// Between the two renames the service named the backup's copy; then
	// its own path again.
	standby := `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`
	var sets []string
	for _, op := range h.ops.log {
		if strings.HasPrefix(op, "set service command line ") || strings.HasPrefix(op, "rename "+h.exe) || strings.HasPrefix(op, "rename "+h.exe+".new") {
			sets = append(sets, op)
		}
	}
	want := []string{
		// The replace in one rename, refused: the binary runs.
		"rename " + h.exe + ".new -> " + h.exe,
		`set service command line "` + standby + `" --config "` + h.config + `"`,
		"rename " + h.exe + " -> " + h.exe + ".old",
		"rename " + h.exe + ".new -> " + h.exe,
		`set service command line "` + h.exe + `" --config "` + h.config + `"`,
	}
	if strings.Join(sets, "\n") != strings.Join(want, "\n") {
		t.Errorf("swap order:\n%s\nwant:\n%s", strings.Join(sets, "\n"), strings.Join(want, "\n"))
	}
	if h.svc.exe != h.exe {
		t.Errorf("the service starts %s, want %s", h.svc.exe, h.exe)
	}
}

func TestABinaryThatExitsAtOnceIsRolledBack(t *testing.T) {
	h := newHost(badBin)
	// The version that failed had written to the database already.
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusRolledBack || r.ExitCode() != 2 {
		t.Fatalf("result %+v\n%s", r, out)
	}
	if !strings.HasPrefix(r.Line(), `result=rolled-back action=upgrade from=v0.1.0 to=v0.2.0 reason="the service edgecore did not start: `) {
		t.Errorf("result line %q", r.Line())
	}
	h.must(t, h.exe, oldBin)
	h.must(t, h.config, oldConfig)
	h.must(t, h.db, oldDB)
	if h.svc.st.State != service.Running || h.svc.running.version != "v0.1.0" {
		t.Errorf("service %v running %s", h.svc.st, h.svc.running.version)
	}
	wantLines(t, out, "Rolling back to v0.1.0 from C:\\etc\\kubeedge\\backup\\v0.1.0",
		"[1/3] stop the service edgecore", "[2/3] restore", "[3/3] start the service edgecore on v0.1.0",
		"v0.1.0 keeps running (process 4002); edgehub is connected")
	if j := h.journal(t); j.Outcome != OutcomeRolledBack {
		t.Errorf("journal %+v", j)
	}
}

func TestRollbackRestoresTheDatabaseTheNewVersionChanged(t *testing.T) {
	h := newHost(newBin)
	b := h.svc.binaries[newBin]
	b.readyAfter, b.crashAfter = 2*time.Second, 9*time.Second
	h.svc.binaries[newBin] = b
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusRolledBack {
		t.Fatalf("result %+v\n%s", r, out)
	}
	if !strings.Contains(r.Reason, "the service was restarted (process 4001, then 4002): v0.2.0 stopped after it started") {
		t.Errorf("reason %q", r.Reason)
	}
	h.must(t, h.db, oldDB)
	if _, ok := h.fs.get(h.db + "-journal"); ok {
		t.Error("the new version's database journal survived the restore; SQLite would replay it into the restored database")
	}
}

func TestHealthGateNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		b       program
		timeout time.Duration
		want    string
	}{
		{"no health record", program{version: "v0.2.0"}, DefaultTimeout, "v0.2.0 was not healthy within 3m0s: v0.2.0 wrote no health record"},
		{"hub never connects", program{version: "v0.2.0", connects: true, readyAfter: time.Hour}, time.Minute,
			"v0.2.0 was not healthy within 1m0s: edgehub did not connect to cloudcore; the node did not report Ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(newBin)
			h.svc.binaries[newBin] = tc.b
			j := h.plannedUpgrade(h.env(driverPID, "v0.1.0"))
			j.Timeout = Duration(tc.timeout)
			start := h.clock.now
			r, out := h.run(t, j)
			if r.Status != StatusRolledBack || !strings.Contains(r.Reason, tc.want) || !strings.Contains(r.Reason, `read C:\var\log\kubeedge\edgecore.log`) {
				t.Fatalf("result %+v, want reason %q\n%s", r, tc.want, out)
			}
			// The gate gives up at its bound, not before, and the
			// rollback adds its own settle time.
			if took := h.clock.now.Sub(start); took < tc.timeout || took > tc.timeout+time.Minute {
				t.Errorf("took %v with a bound of %v", took, tc.timeout)
			}
			wantLines(t, out, "waiting for")
			h.must(t, h.exe, oldBin)
		})
	}
}

func TestHealthRecordsOfOthersDoNotCount(t *testing.T) {
	d := &driver{j: &Journal{ID: "j1", Kind: KindUpgrade, Phase: PhaseStart, From: "v0.1.0", To: "v0.2.0", GateStart: time.Unix(100, 0)}}
	good := Health{Journal: "j1", PID: 7, Version: "v0.2.0", Updated: time.Unix(101, 0)}
	for _, tc := range []struct {
		name string
		edit func(*Health)
		pid  uint32
		want bool
	}{
		{"current", func(*Health) {}, 7, true},
		{"pid unknown", func(*Health) {}, 0, true},
		{"other journal", func(h *Health) { h.Journal = "j0" }, 7, false},
		{"old version", func(h *Health) { h.Version = "v0.1.0" }, 7, false},
		{"other process", func(h *Health) { h.PID = 8 }, 7, false},
		{"before the start", func(h *Health) { h.Updated = time.Unix(99, 0) }, 7, false},
	} {
		h := good
		tc.edit(&h)
		if got := d.current(&h, tc.pid); got != tc.want {
			t.Errorf("%s: current = %v", tc.name, got)
		}
	}
	// During the rollback of an upgrade, the old version's records count.
	d.j.Phase = PhaseRollbackStart
	h := good
	h.Version = "v0.1.0"
	if !d.current(&h, 7) {
		t.Error("the restored version's record does not count during the rollback")
	}
}

func TestBackupFailureChangesNothing(t *testing.T) {
	h := newHost(newBin)
	h.fs.fail = func(op, path string) error {
		if op == "copy" && strings.Contains(path, `\backup\`) {
			return errors.New("There is not enough space on the disk")
		}
		return nil
	}
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusAborted || r.ExitCode() != 1 || !strings.Contains(r.Reason, "There is not enough space on the disk") {
		t.Fatalf("result %+v\n%s", r, out)
	}
	h.must(t, h.exe, oldBin)
	if h.svc.st.State != service.Running || h.svc.running.version != "v0.1.0" {
		t.Errorf("the service was not started again: %v", h.svc.st)
	}
	wantLines(t, out, "Nothing was replaced: starting the service edgecore again on v0.1.0")
}

func TestFailedRollbackSaysWhatIsLeft(t *testing.T) {
	h := newHost(badBin)
	h.fs.fail = func(op, path string) error {
		if op == "copy" && strings.HasSuffix(path, "edgecore.yaml") && !strings.Contains(path, `\backup\`) {
			return errors.New("Access is denied")
		}
		return nil
	}
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusFailed || r.ExitCode() != 3 {
		t.Fatalf("result %+v\n%s", r, out)
	}
	for _, want := range []string{"did not start", `rollback to v0.1.0 failed at "restore"`, "Access is denied", `the backup is in C:\etc\kubeedge\backup\v0.1.0`} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason %q lacks %q", r.Reason, want)
		}
	}
}

func TestRollbackCommandRestoresTheLastBackup(t *testing.T) {
	h := newHost(newBin)
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
		t.Fatalf("upgrade: %+v\n%s", r, out)
	}
	var out bytes.Buffer
	r := Rollback(context.Background(), &out, h.env(200, "v0.2.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusSuccess || r.Line() != "result=success action=rollback from=v0.2.0 to=v0.1.0" {
		t.Fatalf("result %q\n%s", r.Line(), out.String())
	}
	h.must(t, h.exe, oldBin)
	h.must(t, h.db, oldDB)
	if h.svc.running.version != "v0.1.0" {
		t.Errorf("running %s", h.svc.running.version)
	}
	wantLines(t, out.String(), "Rolling edgecore back from v0.2.0 to v0.1.0")

	// Now v0.1.0 runs and the only backup is of v0.1.0.
	out.Reset()
	r = Rollback(context.Background(), &out, h.env(201, "v0.1.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, `no backup of a version other than the running v0.1.0 in C:\etc\kubeedge\backup`) {
		t.Errorf("second rollback: %q", r.Line())
	}
	out.Reset()
	r = Rollback(context.Background(), &out, h.env(201, "v0.1.0"), h.facts(), RollbackOptions{Version: "v0.0.9", Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, `--to v0.0.9: C:\etc\kubeedge\backup\v0.0.9 is not a backup this node made`) {
		t.Errorf("rollback to a version without backup: %q", r.Line())
	}
}

func TestADamagedBackupIsNotRestored(t *testing.T) {
	h := newHost(newBin)
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
		t.Fatalf("upgrade: %+v\n%s", r, out)
	}
	h.fs.put(`C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`, []byte("truncated"))
	var out bytes.Buffer
	r := Rollback(context.Background(), &out, h.env(200, "v0.2.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, "unusable") {
		t.Errorf("%q\n%s", r.Line(), out.String())
	}
	h.must(t, h.exe, newBin)
}

func TestAJournalInProgressBlocksOthers(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	j := h.plannedUpgrade(e)
	j.Phase, j.Driver = PhaseStart, Driver{PID: 300, Heartbeat: h.clock.now}
	h.alive[300] = true
	if err := saveJournal(e, j); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := Upgrade(context.Background(), &out, h.env(400, "v0.1.0"), h.facts(), UpgradeOptions{Package: `C:\pkgs\x.zip`, Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, "an upgrade from v0.1.0 to v0.2.0 is in progress (process 300, phase start") {
		t.Errorf("%q", r.Line())
	}
	r = Rollback(context.Background(), &out, h.env(400, "v0.1.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, "is in progress") {
		t.Errorf("%q", r.Line())
	}
	if _, err := Execute(context.Background(), &out, h.env(400, "v0.1.0"), h.plannedUpgrade(e)); err == nil {
		t.Error("Execute took over a journal whose driver lives")
	}
}

func TestResumeOfAPlannedJournal(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	j := h.plannedUpgrade(e)
	j.Phase, j.Driver = PhasePlanned, Driver{Heartbeat: h.clock.now}
	if err := saveJournal(e, j); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// Reserved for the driver an executor starts: no one else takes it
	// while the reservation is fresh.
	if _, _, err := Resume(context.Background(), &out, h.env(500, "v0.1.0"), ""); !errors.As(err, new(*BusyError)) {
		t.Fatalf("an undesignated process took a reserved journal: %v", err)
	}
	r, ok, err := Resume(context.Background(), &out, h.env(501, "v0.1.0"), j.ID)
	if err != nil || !ok || r.Status != StatusSuccess {
		t.Fatalf("designated driver: %+v %v %v\n%s", r, ok, err, out.String())
	}
	h.must(t, h.exe, newBin)
}

func TestAReservationNoDriverTookIsAbandoned(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	j := h.plannedUpgrade(e)
	j.Phase, j.Driver = PhasePlanned, Driver{Heartbeat: h.clock.now}
	saveJournal(e, j)
	h.clock.now = h.clock.now.Add(staleAfter)
	var out bytes.Buffer
	r, ok, err := Resume(context.Background(), &out, h.env(500, "v0.1.0"), "")
	if err != nil || !ok || r.Status != StatusAborted {
		t.Fatalf("%+v %v %v\n%s", r, ok, err, out.String())
	}
	h.must(t, h.exe, oldBin)
	wantLines(t, out.String(), "Found an unfinished upgrade from v0.1.0 to v0.2.0 in phase planned", "nothing was replaced yet")
}

func TestResumeActionForEveryPhase(t *testing.T) {
	for phase, want := range map[Phase]action{
		PhasePlanned: actAbort, PhaseStop: actAbort, PhaseBackup: actAbort,
		PhaseSwap: actRollback, PhaseStart: actRegate,
		PhaseRollbackStop: actRollback, PhaseRestore: actRollback, PhaseRollbackStart: actRollback,
	} {
		for _, k := range []Kind{KindUpgrade, KindRollback} {
			if got := resumeAction(&Journal{Kind: k, Phase: phase}, false); got != want {
				t.Errorf("%s in %s: %q, want %q", k, phase, got, want)
			}
		}
	}
	if got := resumeAction(&Journal{Phase: PhasePlanned}, true); got != actProceed {
		t.Errorf("designated planned: %q", got)
	}
}

func TestResultLines(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		line string
		code int
	}{
		{Result{Status: StatusSuccess, Action: KindUpgrade, From: "v0.1.0", To: "v0.2.0"}, "result=success action=upgrade from=v0.1.0 to=v0.2.0", 0},
		{Result{Status: StatusUnchanged, Action: KindUpgrade, To: "v0.2.0", Reason: "edgecore v0.2.0 is installed already; nothing to do"},
			`result=unchanged action=upgrade to=v0.2.0 reason="edgecore v0.2.0 is installed already; nothing to do"`, 0},
		{Result{Status: StatusRefused, Action: KindUpgrade, Reason: `package C:\a b.zip: bad`}, `result=refused action=upgrade reason="package C:\\a b.zip: bad"`, 1},
		{Result{Status: StatusAborted, Action: KindUpgrade}, "result=aborted action=upgrade", 1},
		{Result{Status: StatusRolledBack, Action: KindUpgrade, Reason: "x"}, "result=rolled-back action=upgrade reason=x", 2},
		{Result{Status: StatusFailed, Action: KindRollback}, "result=failed action=rollback", 3},
	} {
		if got := tc.r.Line(); got != tc.line {
			t.Errorf("Line() = %s\nwant %s", got, tc.line)
		}
		if got := tc.r.ExitCode(); got != tc.code {
			t.Errorf("%s: exit code %d, want %d", tc.line, got, tc.code)
		}
	}
}

// The staged binary is checked again right before it replaces the old one.
func TestAStagedBinaryChangedOnDiskIsNotInstalled(t *testing.T) {
	h := newHost(newBin)
	j := h.plannedUpgrade(h.env(driverPID, "v0.1.0"))
	h.fs.put(h.staged, []byte("tampered"))
	r, out := h.run(t, j)
	if r.Status != StatusRolledBack || !strings.Contains(r.Reason, "does not match the checksum it was verified with") {
		t.Fatalf("%+v\n%s", r, out)
	}
	h.must(t, h.exe, oldBin)
	if _, ok := h.fs.get(ospath.Join(ospath.Windows, ospath.Dir(ospath.Windows, h.exe), "edgecore.exe.new")); ok {
		t.Error("the rejected copy was left beside the binary")
	}
}

// The service manager's recovery restart of the failed version can come
// in the middle of the restore: the restore is done again once the
// service is stopped.
func TestARecoveryRestartDuringTheRestore(t *testing.T) {
	h := newHost(badBin)
	restarted := false
	h.fs.fail = func(op, path string) error {
		if op == "copy" && path == h.config && h.svc.st.State == service.Stopped && !restarted && h.journal(t).Phase == PhaseRestore {
			restarted = true
			h.svc.nextPID++
			h.svc.launch(h.svc.binaries[oldBin])
		}
		return nil
	}
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if !restarted {
		t.Fatal("the restart was not simulated")
	}
	if r.Status != StatusRolledBack {
		t.Fatalf("%+v\n%s", r, out)
	}
	wantLines(t, out, `the restore was disturbed (restore C:\var\lib\kube edge\edgecore.db: Access is denied (the file is in use by a running process); the service is running)`)
	h.must(t, h.exe, oldBin)
	h.must(t, h.db, oldDB)
}
