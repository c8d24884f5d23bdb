package service

import (
	"errors"
	"fmt"
	"time"
)

// Control is a request from the service manager. The values are Windows'
// SERVICE_CONTROL_* numbers.
type Control uint32

const (
	ControlStop        Control = 1
	ControlInterrogate Control = 4
	ControlShutdown    Control = 5
	// ControlPreShutdown comes at a host shutdown before Shutdown, to a
	// service that accepts it; the service manager then waits for the
	// service to stop for up to its pre-shutdown time-out
	// (Config.PreShutdownTimeout) before it goes on shutting down.
	ControlPreShutdown Control = 15
)

// The controls a running service accepts, as Windows' SERVICE_ACCEPT_*
// bits. Shutdown stays accepted next to pre-shutdown for a service manager
// that does not send pre-shutdown.
const (
	acceptStop        uint32 = 0x1
	acceptShutdown    uint32 = 0x4
	acceptPreShutdown uint32 = 0x100
	acceptedControls         = acceptStop | acceptShutdown | acceptPreShutdown
)

// StopTimeout bounds how long the service waits for edgecore to finish its
// graceful shutdown after Stop or Shutdown before it reports stopped and
// the process exits anyway.
const StopTimeout = 30 * time.Second

// progressInterval is how often a stopping service reports progress; the
// service manager treats a pending state whose check point does not advance
// within the wait hint as hung.
const progressInterval = 2 * time.Second

// report is one status the service sends to the service manager.
type report struct {
	State State
	// Accepting is set when the service takes Stop, Shutdown and
	// pre-shutdown.
	Accepting bool
	// CheckPoint and WaitHint tell the service manager that a pending
	// state is still making progress.
	CheckPoint uint32
	WaitHint   time.Duration
}

// accepts is the SERVICE_ACCEPT_* bits the report carries.
func (r report) accepts() uint32 {
	if r.Accepting {
		return acceptedControls
	}
	return 0
}

// lifecycle is the behaviour of the process under the service manager,
// kept free of Windows calls so that it is tested everywhere.
type lifecycle struct {
	run         func() error
	stop        func()
	stopTimeout time.Duration
	progress    time.Duration
}

// serve runs l.run, reports start-pending and then running, and answers
// controls until run returns or a Stop, Shutdown or pre-shutdown has been
// handled: all three are the one stop path, l.stop. It
// returns the service-specific exit code to report with the final stopped
// state and an error for the caller's log (nil after a clean stop).
//
// A stop the operator or Windows asked for always exits with ExitOK, even
// if run fails or overruns on the way down: a non-zero code would make the
// service manager restart a service that was meant to stop.
func (l lifecycle) serve(controls <-chan Control, send func(report)) (uint32, error) {
	current := report{State: StartPending}
	set := func(r report) {
		current = r
		send(r)
	}
	set(current)

	done := make(chan error, 1)
	go func() { done <- l.run() }()
	// Running as soon as run has been called: edgecore's modules start
	// in the background and each reconnects on its own, so there is no
	// later point at which the node as a whole is "up".
	set(report{State: Running, Accepting: true})

	for {
		select {
		case err := <-done:
			if err != nil {
				return ExitRunFailed, fmt.Errorf("edgecore stopped with an error: %w", err)
			}
			return ExitUnexpectedStop, errors.New("edgecore stopped without a stop request from the service manager")
		case c := <-controls:
			switch c {
			case ControlInterrogate:
				send(current)
			case ControlStop, ControlShutdown, ControlPreShutdown:
				return ExitOK, l.shutdown(c, done, controls, set)
			}
		}
	}
}

// shutdown calls stop and waits up to stopTimeout for run to return,
// reporting stop-pending progress and answering Interrogate meanwhile.
func (l lifecycle) shutdown(c Control, done <-chan error, controls <-chan Control, set func(report)) error {
	pending := report{State: StopPending, CheckPoint: 1, WaitHint: 2 * l.progress}
	set(pending)
	// stop runs on its own goroutine so that one that blocks cannot keep
	// the service from reporting progress or from stopping in time.
	go l.stop()

	deadline := time.NewTimer(l.stopTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(l.progress)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("edgecore stopped with an error after the %s request: %w", controlName(c), err)
			}
			return nil
		case <-deadline.C:
			return fmt.Errorf("edgecore did not finish shutting down within %v of the %s request; stopping anyway", l.stopTimeout, controlName(c))
		case <-tick.C:
			pending.CheckPoint++
			set(pending)
		case c2 := <-controls:
			// A second Stop, or a Shutdown after the pre-shutdown,
			// changes nothing; only Interrogate needs an answer.
			if c2 == ControlInterrogate {
				set(pending)
			}
		}
	}
}

func controlName(c Control) string {
	switch c {
	case ControlStop:
		return "stop"
	case ControlShutdown:
		return "system shutdown"
	case ControlPreShutdown:
		return "system pre-shutdown"
	case ControlInterrogate:
		return "interrogate"
	}
	return fmt.Sprintf("control %d", uint32(c))
}
