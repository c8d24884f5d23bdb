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
				delete(h.alive, driverPID)
				h.clock.now = h.clock.now.Add(time.Minute)
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
