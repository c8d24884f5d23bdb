//go:build crashpoints

package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/steps/crashtest"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// TestCrashAtEveryPhaseOfUpgradeAndRollback crashes the upgrade driver at
// each of its phase boundaries in turn (before each phase is recorded in
// the journal, and just after), for an upgrade that goes through and one
// whose new binary exits at once and is rolled back. After each crash the
// host boots (the service manager starts the binary in place, which finds
// the unfinished journal) and the next `upgrade --resume` finishes it;
// the host must then run either the old version with its own
// configuration and database (before) or the new one (after), with the
// journal done. TestPowerCutAtEveryOperation cuts at every file and
// service operation in between; this one is the matrix of the
// procedure's own steps. Over the package's recording fakes: Wine runs no
// second service manager to upgrade under.
func TestCrashAtEveryPhaseOfUpgradeAndRollback(t *testing.T) {
	for _, tc := range []struct {
		name, binary string
	}{
		{"upgrade to a healthy v0.2.0", newBin},
		{"upgrade to a v0.2.0 that exits at once (rolled back)", badBin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			execute := func(h *host) {
				e := h.env(driverPID, "v0.1.0")
				j := h.plannedUpgrade(e)
				h.alive[driverPID] = true
				if _, err := Execute(context.Background(), &bytes.Buffer{}, e, j); err != nil {
					t.Errorf("Execute: %v", err)
				}
			}
			passed, _ := crashtest.Run("", func() { execute(newHost(tc.binary)) })
			if len(passed) < 8 {
				t.Fatalf("the driver passed only %d boundaries: %v", len(passed), passed)
			}
			m := crashtest.Matrix{Procedure: tc.name + " (Windows host, recording fakes)"}
			for _, at := range passed {
				h := newHost(tc.binary)
				if _, crashed := crashtest.Run(at, func() { execute(h) }); !crashed {
					t.Fatalf("%s: not reached again", at)
				}
				out := h.bootAndResume(t, at, driverPID, time.Minute)
				outcome, half := h.endState()
				if half != "" {
					t.Errorf("crash at %s, then boot and upgrade --resume: %s\n%s", at, half, out.String())
					m.Add(at, "boot, upgrade --resume", "HALF")
					continue
				}
				if tc.binary == badBin && outcome != crashtest.Before {
					t.Errorf("crash at %s: a binary that exits at once is in place", at)
				}
				m.Add(at, "boot, upgrade --resume", outcome)
			}
			m.Print(t)
		})
	}
}

// endState says whether the host runs the old version with its own
// configuration and database (before) or the new one (after), with the
// journal done and the service naming the installed binary; half says
// what is neither.
func (h *host) endState() (outcome, half string) {
	e := h.env(600, "v0.1.0")
	j, _ := loadJournal(e)
	bin, _ := h.fs.get(h.exe)
	cfg, _ := h.fs.get(h.config)
	db, _ := h.fs.get(h.db)
	switch {
	case j != nil && !j.Done():
		return "", fmt.Sprintf("journal still in phase %s", j.Phase)
	case h.svc.st.State != service.Running:
		return "", fmt.Sprintf("service %v", h.svc.st.State)
	case h.svc.exe != h.exe:
		return "", "the service starts " + h.svc.exe
	case bin == oldBin && h.svc.running.version == "v0.1.0" && cfg == oldConfig && db == oldDB:
		return crashtest.Before, ""
	case bin == newBin && h.svc.running.version == "v0.2.0":
		return crashtest.After, ""
	}
	return "", fmt.Sprintf("binary %q running %s, configuration %q, database %q", bin, h.svc.running.version, cfg, db)
}

// TestCrashAtEveryStepOfAConfigUpdateJob crashes a ConfigUpdateJob at
// each boundary in turn: in the node as it hands the job to its driver
// (before the journal is written, once it is, once the driver is
// started) and in the driver at each phase, for a configuration that
// starts and for one edgecore cannot start with. After each crash the
// host boots and `upgrade --resume` runs; the node must then run the old
// configuration (before) or the new one (after), never a half-written
// or a missing one, with the journal done.
func TestCrashAtEveryStepOfAConfigUpdateJob(t *testing.T) {
	const newConfig = "config with maxPods 60"
	for _, tc := range []struct {
		name, config string
		starts       bool
	}{
		{"ConfigUpdateJob with a configuration that starts", newConfig, true},
		{"ConfigUpdateJob with a configuration edgecore cannot start with (rolled back)", "config edgecore cannot start with", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setup := func() *host {
				h := newHost(newBin)
				if !tc.starts {
					h.svc.badConfig = tc.config
				}
				return h
			}
			// The node hands the job over, then its driver runs.
			job := func(h *host) {
				js, _, _ := jobsOn(h)
				if r, now := js.UpdateConfig(configJob(), []byte(tc.config)); now {
					t.Errorf("the update answered at once: %+v", r)
					return
				}
				j, err := loadJournal(h.env(600, "v0.1.0"))
				if err != nil || j == nil {
					t.Errorf("no journal: %v", err)
					return
				}
				h.alive[7001] = true
				if _, _, err := Resume(context.Background(), &bytes.Buffer{}, h.env(7001, "v0.1.0"), j.ID); err != nil {
					t.Errorf("the driver: %v", err)
				}
			}
			passed, _ := crashtest.Run("", func() { job(setup()) })
			if len(passed) < 6 {
				t.Fatalf("the job passed only %d boundaries: %v", len(passed), passed)
			}
			m := crashtest.Matrix{Procedure: tc.name + " (Windows host, recording fakes)"}
			next := fmt.Sprintf("boot, %v later upgrade --resume", staleAfter+time.Minute)
			for _, at := range passed {
				h := setup()
				if _, crashed := crashtest.Run(at, func() { job(h) }); !crashed {
					t.Fatalf("%s: not reached again", at)
				}
				// A journal the node reserved for a driver that never
				// started is taken over once its heartbeat is stale.
				out := h.bootAndResume(t, at, 7001, staleAfter+time.Minute)
				j, _ := loadJournal(h.env(600, "v0.1.0"))
				bin, _ := h.fs.get(h.exe)
				cfg, _ := h.fs.get(h.config)
				db, _ := h.fs.get(h.db)
				var outcome string
				switch {
				case j != nil && !j.Done():
					t.Errorf("crash at %s: journal still in phase %s\n%s", at, j.Phase, out.String())
				case h.svc.st.State != service.Running || bin != oldBin || db != oldDB:
					t.Errorf("crash at %s: service %v, binary %q, database %q\n%s", at, h.svc.st.State, bin, db, out.String())
				case cfg == oldConfig:
					outcome = crashtest.Before
				case cfg == newConfig && tc.starts:
					outcome = crashtest.After
				default:
					t.Errorf("crash at %s: the configuration holds %q", at, cfg)
				}
				if outcome == "" {
					m.Add(at, next, "HALF")
					continue
				}
				m.Add(at, next, outcome)
			}
			m.Print(t)
		})
	}
}

// bootAndResume is what follows a crash at the boundary at of the process
// dead: after the time later the host boots (the service manager starts
// the binary in place, whose node takes an unfinished journal over), and
// `upgrade --resume` runs. It returns what resume printed.
func (h *host) bootAndResume(t *testing.T, at string, dead int, later time.Duration) *bytes.Buffer {
	t.Helper()
	delete(h.alive, dead)
	h.clock.now = h.clock.now.Add(later)
	h.svc.spawned = nil
	h.svc.boot()
	if h.svc.node != nil {
		h.svc.node.tick()
	}
	var out bytes.Buffer
	h.alive[600] = true
	if _, _, err := Resume(context.Background(), &out, h.env(600, "v0.1.0"), ""); err != nil {
		t.Errorf("crash at %s: resume: %v", at, err)
	}
	return &out
}
