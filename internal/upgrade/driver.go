package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// beatEvery is how often a driver that is waiting refreshes its
// heartbeat; well inside staleAfter.
const beatEvery = 10 * time.Second

// driver carries one journal out. A journal is driven by one process at a
// time; the others only read it.
type driver struct {
	e        Env
	j        *Journal
	out      io.Writer
	lastBeat time.Time
}

// BusyError is returned when another live process is carrying the journal
// out.
type BusyError struct {
	Journal *Journal
}

func (b *BusyError) Error() string {
	j := b.Journal
	who := "a process that is starting"
	if j.Driver.PID != 0 {
		who = fmt.Sprintf("process %d", j.Driver.PID)
	}
	return fmt.Sprintf("an %s from %s to %s is in progress (%s, phase %s, last seen %s): wait for it to finish and run the command again",
		j.Kind, j.From, j.To, who, j.Phase, j.Driver.Heartbeat.Format(time.RFC3339))
}

// Execute writes the planned journal j and carries it out: the upgrade
// command's path. It fails without changing anything when another process
// drives an unfinished journal.
func Execute(ctx context.Context, out io.Writer, e Env, j *Journal) (Result, error) {
	if prev, err := loadJournal(e); err != nil {
		return Result{}, err
	} else if prev != nil && !prev.Done() {
		if driverAlive(e, prev) {
			return Result{}, &BusyError{Journal: prev}
		}
		return Result{}, fmt.Errorf("an %s from %s to %s stopped in phase %s: finish it first with `edgecore.exe upgrade --resume` (or any upgrade or rollback command does)",
			prev.Kind, prev.From, prev.To, prev.Phase)
	}
	j.Phase = PhasePlanned
	d := &driver{e: e, j: j, out: out}
	if err := d.save(); err != nil {
		return Result{}, err
	}
	return d.run(ctx, actProceed), nil
}

// Resume takes over an unfinished journal, as a later process finds it
// after the one driving it died: one started by a NodeUpgradeJob executor
// to carry out the journal id (which proceeds from "planned"), the next
// upgrade or rollback command, or a helper the node starts. It returns
// false when there is nothing to resume.
func Resume(ctx context.Context, out io.Writer, e Env, id string) (Result, bool, error) {
	j, err := loadJournal(e)
	if err != nil || j == nil || j.Done() {
		return Result{}, false, err
	}
	if driverAlive(e, j) && !(id != "" && id == j.ID && j.Driver.PID == 0) {
		return Result{}, false, &BusyError{Journal: j}
	}
	act := resumeAction(j, id != "" && id == j.ID)
	d := &driver{e: e, j: j, out: out}
	if err := d.save(); err != nil {
		return Result{}, false, err
	}
	if act != actProceed {
		fmt.Fprintf(out, "Found an unfinished %s from %s to %s in phase %s (journal %s); %s.\n",
			j.Kind, j.From, j.To, j.Phase, e.Paths.Journal, act)
	}
	return d.run(ctx, act), true, nil
}

// action is what a driver does with a journal it takes over.
type action string

const (
	actProceed  action = "carrying it out"
	actAbort    action = "nothing was replaced yet, so it is abandoned and the service started again"
	actRollback action = "rolling back to the backup"
	actRegate   action = "the new binary is in place: checking its health again, rolling back if it fails"
)

// resumeAction decides, by the phase it was in, what becomes of a journal
// whose driver died. Before the swap the host is unchanged, so nothing is
// forced on it later: the upgrade is abandoned (the cloud or the operator
// can ask again). During the swap the binary may be half replaced, so the
// backup goes back. Once the new binary is in place the health gate
// decides. An interrupted rollback is carried out again from its start;
// each of its steps can be repeated.
func resumeAction(j *Journal, designated bool) action {
	switch j.Phase {
	case PhasePlanned:
		if designated {
			return actProceed
		}
		return actAbort
	case PhaseStop, PhaseBackup:
		return actAbort
	case PhaseStart:
		return actRegate
	}
	return actRollback
}

func (d *driver) run(ctx context.Context, act action) Result {
	j := d.j
	switch act {
	case actProceed:
		if j.Kind == KindConfig {
			return d.configure(ctx)
		}
		if j.Kind == KindRollback {
			fmt.Fprintf(d.out, "Rolling edgecore back from %s to %s (service %s runs %s)\n", j.From, j.To, j.Service, j.Executable)
			return d.rollback(j.Reason)
		}
		fmt.Fprintf(d.out, "Upgrading edgecore from %s to %s (service %s runs %s)\n", j.From, j.To, j.Service, j.Executable)
		return d.upgrade(ctx)
	case actAbort:
		return d.abort(fmt.Sprintf("the %s was interrupted in phase %s, before the binary was replaced", j.Kind, j.Phase))
	case actRegate:
		if err := d.startAndGate(ctx, 1, 1); err != nil {
			return d.rollback(err.Error())
		}
		return d.finish(OutcomeSuccess, "")
	}
	reason := j.Reason
	if reason == "" && j.Kind != KindRollback {
		reason = fmt.Sprintf("the %s was interrupted in phase %s", j.Kind, j.Phase)
	}
	return d.rollback(reason)
}

// The steps of an upgrade.
const upgradeSteps = 5

func (d *driver) upgrade(ctx context.Context) Result {
	e, j := d.e, d.j
	steps.Title(d.out, 1, upgradeSteps, "stop the service "+j.Service)
	if err := d.phase(PhaseStop); err != nil {
		return d.abort(err.Error())
	}
	if err := e.Services.Stop(j.Service); err != nil {
		return d.abort(fmt.Sprintf("stopping the service %s: %v", j.Service, err))
	}
	d.printf("stopped\n")

	what := fmt.Sprintf("%s, %s and %s", j.Executable, j.ConfigFile, j.DataSource)
	if j.Runtime != nil {
		what = fmt.Sprintf("%s, %s, %s and the container runtime (%s)", j.Executable, j.ConfigFile, j.DataSource, versionsLine(j.Runtime.From))
	}
	steps.Title(d.out, 2, upgradeSteps, fmt.Sprintf("back up %s to %s", what, j.Backup))
	if err := d.phase(PhaseBackup); err != nil {
		return d.abort(err.Error())
	}
	if _, err := backup(e, j, j.From, d.detail()); err != nil {
		return d.abort(err.Error())
	}

	title := fmt.Sprintf("replace %s with %s", j.Executable, j.To)
	if j.StagedConfig != "" {
		title += ", and " + j.ConfigFile + " with its configuration"
	}
	if j.Runtime != nil {
		title += ", and the container runtime with " + versionsLine(j.Runtime.To)
	}
	steps.Title(d.out, 3, upgradeSteps, title)
	if err := d.phase(PhaseSwap); err != nil {
		return d.rollback(err.Error())
	}
	if err := d.placeBinary(j.Staged, j.StagedSHA256); err != nil {
		return d.rollback(err.Error())
	}
	d.printf("%s is now %s\n", j.Executable, j.To)
	if err := d.placeConfig(); err != nil {
		return d.rollback(err.Error())
	}
	if err := d.retire(); err != nil {
		return d.rollback(err.Error())
	}
	if j.Runtime != nil {
		if err := d.swapRuntime(); err != nil {
			return d.rollback(err.Error())
		}
	}

	if err := d.startAndGate(ctx, 4, upgradeSteps); err != nil {
		return d.rollback(err.Error())
	}
	steps.Title(d.out, 5, upgradeSteps, "clean up")
	return d.finish(OutcomeSuccess, "")
}

// startAndGate starts the service on the new binary and waits for the
// health gate.
func (d *driver) startAndGate(ctx context.Context, i, n int) error {
	e, j := d.e, d.j
	steps.Title(d.out, i, n, fmt.Sprintf("start the service %s and wait up to %v for it to keep running, the hub to connect and the node to be Ready",
		j.Service, time.Duration(j.Timeout)))
	j.GateStart = e.Clock.Now().UTC()
	if err := d.phase(PhaseStart); err != nil {
		return err
	}
	if j.Runtime != nil {
		// edgecore's service depends on containerd's: the new runtime
		// runs and answers CRI first.
		if err := d.startRuntime(ctx); err != nil {
			return err
		}
	}
	// A record left by an earlier run must not pass for this one.
	e.FS.Remove(e.Paths.Health)
	if err := e.Services.Start(j.Service); err != nil {
		return fmt.Errorf("the service %s did not start: %v", j.Service, err)
	}
	if err := d.gate(ctx); err != nil {
		return err
	}
	if j.Runtime != nil {
		return d.checkRuntimeRuns(ctx)
	}
	return nil
}

// abort ends an upgrade that replaced nothing: the service, which may have
// been stopped, is started again on the binary it had.
func (d *driver) abort(reason string) Result {
	e, j := d.e, d.j
	d.printf("failed: %s\n", reason)
	fmt.Fprintf(d.out, "Nothing was replaced: starting the service %s again on %s\n", j.Service, j.From)
	if err := e.Services.Start(j.Service); err != nil {
		return d.finish(OutcomeFailed, fmt.Sprintf("%s; and starting the service %s again failed: %v; fix: read %s, then run `edgecore.exe service start`",
			reason, j.Service, err, e.Paths.NodeLogFile))
	}
	d.printf("the service runs %s\n", j.From)
	return d.finish(OutcomeAborted, reason)
}

// The steps of a rollback.
const rollbackSteps = 3

// rollback puts the backup back and starts the service on it. It ignores
// the command's context: a rollback stopped half-way would leave the host
// worse off than either version.
func (d *driver) rollback(reason string) Result {
	e, j := d.e, d.j
	target := j.From
	if j.Kind == KindRollback {
		target = j.To
	}
	if reason != "" {
		d.printf("failed: %s\n", reason)
	}
	j.Reason = reason
	fmt.Fprintf(d.out, "Rolling back to %s from %s\n", target, j.Backup)
	fail := func(step string, err error) Result {
		why := fmt.Sprintf("rollback to %s failed at %q: %v; fix: the backup is in %s: run `edgecore.exe rollback` again, or copy its files back by hand",
			target, step, err, j.Backup)
		if reason != "" {
			why = reason + "; " + why
		}
		return d.finish(OutcomeFailed, why)
	}
	ctx := context.Background()

	steps.Title(d.out, 1, rollbackSteps, "stop the service "+j.Service)
	if err := d.phase(PhaseRollbackStop); err != nil {
		return fail("stop", err)
	}
	if err := e.Services.Stop(j.Service); err != nil {
		return fail("stop", err)
	}
	d.printf("stopped\n")

	files := fmt.Sprintf("%s, %s and %s", j.Executable, j.ConfigFile, j.DataSource)
	if j.Kind == KindConfig {
		// Only the configuration changed.
		files = j.ConfigFile
	}
	if j.Runtime != nil {
		files = fmt.Sprintf("%s, %s, %s and the container runtime", j.Executable, j.ConfigFile, j.DataSource)
	}
	steps.Title(d.out, 2, rollbackSteps, fmt.Sprintf("restore %s from %s", files, j.Backup))
	if err := d.phase(PhaseRestore); err != nil {
		return fail("restore", err)
	}
	restore := d.restoreConfig
	if j.Kind != KindConfig {
		b, err := readBackup(e, j.Backup)
		if err != nil {
			return fail("restore", err)
		}
		restore = func() error { return d.restore(b) }
	}
	// The service manager restarts a crashed service after a delay
	// (5 s, then 30 s): a restart it had scheduled for the failed version
	// can come in the middle of the restore, and the process then holds
	// the files being restored. The service is stopped and the restore
	// done again.
	for attempt := 1; ; attempt++ {
		err := restore()
		st, qerr := e.Services.Query(j.Service)
		if err == nil && (qerr != nil || st.State == service.Stopped) {
			break
		}
		if attempt == 3 {
			if err == nil {
				err = fmt.Errorf("the service keeps being started (%s)", st)
			}
			return fail("restore", err)
		}
		// A stopped service's process may also take a moment to exit and
		// let go of its files.
		d.printf("the restore was disturbed (%v; the service is %s): stopping the service and restoring again\n", err, st.State)
		if err := e.Services.Stop(j.Service); err != nil {
			return fail("restore", err)
		}
		e.sleep(ctx, 2*time.Second)
	}

	steps.Title(d.out, 3, rollbackSteps, fmt.Sprintf("start the service %s on %s and check that it keeps running", j.Service, target))
	j.GateStart = e.Clock.Now().UTC()
	if err := d.phase(PhaseRollbackStart); err != nil {
		return fail("start", err)
	}
	if j.Runtime != nil {
		if err := d.startRuntime(ctx); err != nil {
			return fail("start", err)
		}
	}
	e.FS.Remove(e.Paths.Health)
	if err := e.Services.Start(j.Service); err != nil {
		return fail("start", err)
	}
	if err := d.settleRunning(ctx, target); err != nil {
		return fail("start", err)
	}
	if j.Kind == KindRollback {
		return d.finish(OutcomeSuccess, reason)
	}
	return d.finish(OutcomeRolledBack, reason)
}

// finish records the outcome; the journal stays, with its outcome, until
// the next upgrade, for the report to the cloud and for the operator.
func (d *driver) finish(o Outcome, reason string) Result {
	j := d.j
	j.Phase, j.Outcome, j.Reason = PhaseDone, o, reason
	if o != OutcomeFailed {
		d.cleanup()
	}
	if o == OutcomeSuccess && j.Kind == KindUpgrade {
		d.dropRetired()
	}
	d.e.FS.Remove(d.e.Paths.Health)
	if err := d.save(); err != nil {
		// The host is in the state the outcome says; only the record
		// of it is missing.
		fmt.Fprintf(d.out, "warning: %v\n", err)
	}
	// After a failed rollback every backup may be the operator's way
	// back, and which version runs is unknown: nothing is pruned.
	if o != OutcomeFailed {
		d.prune()
	}
	return resultOf(j)
}

// phase records that step p begins.
func (d *driver) phase(p Phase) error {
	d.j.Phase = p
	return d.save()
}

// save writes the journal with a fresh heartbeat.
func (d *driver) save() error {
	now := d.e.Clock.Now().UTC()
	d.j.Driver = Driver{PID: d.e.PID, Heartbeat: now}
	d.lastBeat = now
	return saveJournal(d.e, d.j)
}

// beat refreshes the heartbeat while a step waits.
func (d *driver) beat() {
	if d.e.Clock.Now().Sub(d.lastBeat) >= beatEvery {
		if err := d.save(); err != nil {
			d.printf("warning: %v\n", err)
		}
	}
}

func (d *driver) printf(format string, args ...any) {
	fmt.Fprintf(d.out, steps.Indent+format, args...)
}

// detail is a writer whose lines appear under the current step.
func (d *driver) detail() io.Writer { return steps.Indented(d.out) }

// stoppedErr describes a service that is not running where it should be.
func stoppedErr(st service.Status) error {
	return errors.New("the service is " + st.String())
}
