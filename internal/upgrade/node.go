package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Report is a NodeUpgradeJob event as the cloud's state machine takes it:
// Event is "Init", "Check", "Backup", "Upgrade" or "Rollback".
type Report struct {
	Event   string
	Success bool
	Reason  string
	// From and To are the versions of an upgrade or rollback that ran,
	// for reports that carry them (v1alpha2 NodeUpgradeJobs).
	From, To string
}

// Node is the running edgecore's part in an upgrade: while one is in
// progress it writes the health record the driver waits for, and it
// starts a new driver when the one in charge died; once the upgrade is
// done, it reports a NodeUpgradeJob's outcome to the cloud. Whichever
// version runs at that point reports: the new one on success, the old one
// after a rollback.
type Node struct {
	Env Env
	// Started is when this process started.
	Started time.Time
	// Executable is this process's binary.
	Executable string
	// Connected reports whether edgehub is connected to cloudcore.
	Connected func() bool
	// Ready reports whether the kubelet's last node status said Ready and
	// the cloud accepted it.
	Ready func() bool
	// Send reports a job's event to the cloud.
	Send func(Job, Report)
	// Logf logs a line to the node's log.
	Logf func(format string, args ...any)

	mu        sync.Mutex
	watching  bool
	lastSpawn time.Time
}

// Watch follows the journal until it is done and its outcome reported, or
// until ctx ends. It returns at once when there is no journal, or when it
// already watches; call it again after handing a journal to a new driver.
func (n *Node) Watch(ctx context.Context) {
	n.mu.Lock()
	if n.watching {
		n.mu.Unlock()
		return
	}
	n.watching = true
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.watching = false
		n.mu.Unlock()
	}()
	for {
		more, err := n.tick()
		if err != nil {
			n.Logf("Upgrade journal: %v", err)
		}
		if !more {
			return
		}
		if n.Env.sleep(ctx, 2*poll) {
			return
		}
	}
}

// tick does one round of Watch and says whether there is more to do.
func (n *Node) tick() (bool, error) {
	e := n.Env
	j, err := loadJournal(e)
	if err != nil || j == nil {
		return false, err
	}
	if j.Done() {
		if j.Job == nil || j.Job.Reported {
			return false, nil
		}
		if !n.Connected() {
			// The report goes through edgehub; wait for it.
			return true, nil
		}
		r := reportOf(j)
		n.Send(*j.Job, r)
		n.Logf("Reported NodeUpgradeJob %s to the cloud: %s %v %s", j.Job.TaskID, r.Event, r.Success, r.Reason)
		j.Job.Reported = true
		// Only the reported flag changes: written back only if the
		// journal is still this one.
		if cur, err := loadJournal(e); err == nil && cur != nil && cur.ID == j.ID {
			cur.Job.Reported = true
			return false, saveJournal(e, cur)
		}
		return false, nil
	}
	if err := n.writeHealth(j); err != nil {
		n.Logf("Cannot write the upgrade health record: %v", err)
	}
	now := e.Clock.Now()
	if !driverAlive(e, j) && now.Sub(n.lastSpawn) >= staleAfter {
		n.lastSpawn = now
		exe := n.helper(j)
		pid, err := e.Spawn(exe, []string{"upgrade", "--resume"}, e.Paths.LogFile)
		if err != nil {
			return true, fmt.Errorf("the %s from %s to %s stopped in phase %s and starting %s to finish it failed: %w", j.Kind, j.From, j.To, j.Phase, exe, err)
		}
		n.Logf("The %s from %s to %s stopped in phase %s; started %s (process %d) to finish it; it logs to %s", j.Kind, j.From, j.To, j.Phase, exe, pid, e.Paths.LogFile)
	}
	return true, nil
}

// helper is the binary that finishes an unfinished journal: the backed-up
// version once the backup is complete, since until the health gate passes
// the new version is not trusted to roll itself back; before that, the
// binary in place, which is still the old one.
func (n *Node) helper(j *Journal) string {
	switch j.Phase {
	case PhasePlanned, PhaseStop, PhaseBackup:
		return n.Executable
	}
	copy := ospath.Join(n.Env.GOOS, j.Backup, config.ExecutableName(n.Env.GOOS))
	if _, err := readBackup(n.Env, j.Backup); err == nil {
		return copy
	}
	return n.Executable
}

func (n *Node) writeHealth(j *Journal) error {
	e := n.Env
	h := Health{
		Journal: j.ID, PID: e.PID, Version: e.Version, Started: n.Started.UTC(), Updated: e.Clock.Now().UTC(),
		HubConnected: n.Connected(), NodeReady: n.Ready(),
	}
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return e.FS.WriteFile(e.Paths.Health, data)
}

// reportOf is the event a finished journal reports, in the terms of the
// cloud's NodeUpgradeJob state machine (fsm/v1alpha1 UpgradeRule): from
// Upgrading, "Upgrade" Success ends the job successful, "Upgrade" Failure
// failed, and "Rollback" (either way) failed, with the reason kept.
func reportOf(j *Journal) Report {
	if j.Kind == KindConfig {
		return configReport(j)
	}
	r := outcomeOf(j)
	r.From, r.To = j.From, j.To
	if j.Job != nil && j.Job.From != "" && j.Job.To != "" {
		r.From, r.To = j.Job.From, j.Job.To
	}
	return r
}

func outcomeOf(j *Journal) Report {
	switch {
	case j.Kind == KindUpgrade && j.Outcome == OutcomeSuccess:
		return Report{Event: "Upgrade", Success: true}
	case j.Kind == KindUpgrade && j.Outcome == OutcomeRolledBack:
		return Report{Event: "Rollback", Success: true,
			Reason: fmt.Sprintf("upgrade to %s failed and was rolled back to %s: %s", j.To, j.From, j.Reason)}
	case j.Kind == KindUpgrade && j.Outcome == OutcomeAborted:
		return Report{Event: "Upgrade", Reason: fmt.Sprintf("upgrade to %s failed before the binary was replaced; %s still runs: %s", j.To, j.From, j.Reason)}
	case j.Kind == KindUpgrade:
		return Report{Event: "Rollback", Reason: fmt.Sprintf("upgrade to %s failed and so did the rollback to %s: %s", j.To, j.From, j.Reason)}
	case j.Outcome == OutcomeSuccess:
		return Report{Event: "Rollback", Success: true, Reason: fmt.Sprintf("rolled back from %s to %s", j.From, j.To)}
	}
	return Report{Event: "Rollback", Reason: fmt.Sprintf("rollback from %s to %s failed: %s", j.From, j.To, j.Reason)}
}
