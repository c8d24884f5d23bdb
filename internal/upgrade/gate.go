package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/service"
)

// gate waits until the new version is healthy, and fails as soon as it
// cannot be: the service must run in one process the whole time, and the
// health record that process writes must show the hub connected and the
// node Ready (see Health); then the service must keep running for settle.
// A service that stops, or is restarted by the service manager's recovery
// actions (a new process), has failed.
func (d *driver) gate(ctx context.Context) error {
	e, j := d.e, d.j
	timeout := time.Duration(j.Timeout)
	start := e.Clock.Now()
	deadline := start.Add(timeout)
	lastProgress := start
	var (
		pid          uint32
		healthySince time.Time
		last         *Health
		queryErr     error
		saidHub      bool
		saidReady    bool
	)
	for {
		d.beat()
		now := e.Clock.Now()
		st, err := e.Services.Query(j.Service)
		queryErr = err
		if err == nil {
			switch st.State {
			case service.Running:
				switch {
				case pid == 0 && st.ProcessID != 0:
					pid = st.ProcessID
					d.printf("the service runs (process %d)\n", pid)
				case pid != 0 && st.ProcessID != pid:
					return fmt.Errorf("the service was restarted (process %d, then %d): %s stopped after it started; read %s",
						pid, st.ProcessID, j.To, e.Paths.NodeLogFile)
				}
			case service.StartPending:
			default:
				return fmt.Errorf("%v after it started: %s does not run on this host; read %s", stoppedErr(st), j.To, e.Paths.NodeLogFile)
			}
		}
		if h, err := loadHealth(e); err == nil && d.current(h, pid) {
			last = h
			if h.HubConnected && !saidHub {
				saidHub = true
				d.printf("edgehub connected to cloudcore (%v after the start)\n", now.Sub(start).Round(time.Second))
			}
			if h.NodeReady && !saidReady {
				saidReady = true
				d.printf("the node reported Ready and the cloud accepted it (%v after the start)\n", now.Sub(start).Round(time.Second))
			}
			if h.HubConnected && h.NodeReady && healthySince.IsZero() {
				healthySince = now
			}
		}
		if !healthySince.IsZero() && now.Sub(healthySince) >= settle {
			d.printf("%s keeps running (process %d) %v after it became healthy\n", j.To, pid, settle)
			return nil
		}
		if !now.Before(deadline) {
			return d.unhealthy(timeout, last, queryErr)
		}
		if now.Sub(lastProgress) >= progressEvery {
			lastProgress = now
			d.printf("waiting for %s (%v of %v)\n", missing(last, healthySince), now.Sub(start).Round(time.Second), timeout)
		}
		if e.sleep(ctx, poll) {
			return fmt.Errorf("interrupted during the health gate (%v)", ctx.Err())
		}
	}
}

// current reports whether h was written for this journal, by the version
// it installs, in the service's process, since the service was started.
func (d *driver) current(h *Health, pid uint32) bool {
	j := d.j
	want := j.To
	if j.Phase == PhaseRollbackStart && j.Kind == KindUpgrade {
		want = j.From
	}
	return h.Journal == j.ID && h.Version == want && (pid == 0 || h.PID == int(pid)) && !h.Updated.Before(j.GateStart)
}

func missing(h *Health, healthySince time.Time) string {
	if !healthySince.IsZero() {
		return "the service to keep running"
	}
	var m []string
	if h == nil {
		return "the new version's first health record"
	}
	if !h.HubConnected {
		m = append(m, "the hub connection")
	}
	if !h.NodeReady {
		m = append(m, "the node's Ready status")
	}
	return strings.Join(m, " and ")
}

// unhealthy says what did not happen within the bound.
func (d *driver) unhealthy(timeout time.Duration, h *Health, queryErr error) error {
	e, j := d.e, d.j
	var why []string
	switch {
	case h == nil:
		why = append(why, j.To+" wrote no health record (did its modules start?)")
	default:
		if !h.HubConnected {
			why = append(why, "edgehub did not connect to cloudcore")
		}
		if !h.NodeReady {
			why = append(why, "the node did not report Ready (or the cloud did not accept its status)")
		}
		if h.HubConnected && h.NodeReady {
			why = append(why, fmt.Sprintf("it did not keep running for %v", settle))
		}
	}
	if queryErr != nil {
		why = append(why, fmt.Sprintf("the service manager did not answer: %v", queryErr))
	}
	return fmt.Errorf("%s was not healthy within %v: %s; read %s", j.To, timeout, strings.Join(why, "; "), e.Paths.NodeLogFile)
}

// settleRunning waits, after a rollback, until the service runs and keeps
// running in one process for settle. The restored version is the one that
// ran before, so its hub connection is reported when seen but not
// required: the cloud may be what is down.
func (d *driver) settleRunning(ctx context.Context, version string) error {
	e, j := d.e, d.j
	timeout := time.Duration(j.Timeout)
	start := e.Clock.Now()
	var pid uint32
	var since time.Time
	for {
		d.beat()
		now := e.Clock.Now()
		st, err := e.Services.Query(j.Service)
		if err == nil {
			switch st.State {
			case service.Running:
				if since.IsZero() || (pid != 0 && st.ProcessID != pid) {
					if !since.IsZero() {
						return fmt.Errorf("the service was restarted (process %d, then %d): %s stopped after it started; read %s",
							pid, st.ProcessID, version, e.Paths.NodeLogFile)
					}
					pid, since = st.ProcessID, now
				}
			case service.StartPending:
			default:
				return fmt.Errorf("%v: %s did not keep running; read %s", stoppedErr(st), version, e.Paths.NodeLogFile)
			}
		}
		if !since.IsZero() && now.Sub(since) >= settle {
			msg := fmt.Sprintf("%s keeps running (process %d)", version, pid)
			if h, err := loadHealth(e); err == nil && d.current(h, pid) && h.HubConnected {
				msg += "; edgehub is connected"
			}
			d.printf("%s\n", msg)
			return nil
		}
		if now.Sub(start) >= timeout {
			return fmt.Errorf("the service did not run for %v within %v (last: %v)", settle, timeout, err)
		}
		if e.sleep(ctx, poll) {
			return ctx.Err()
		}
	}
}
