package service

import (
	"strings"
	"time"
)

// Default bounds for the service subcommands.
const (
	// StartTimeout bounds `service start`: edgecore reports running as
	// soon as its modules are launched, so this only has to cover process
	// start-up.
	StartTimeout = 30 * time.Second
	// StopWaitTimeout bounds `service stop` and the stop `service
	// uninstall` does first: the service's own StopTimeout, after which it
	// reports stopped even if edgecore has not finished, plus a margin.
	StopWaitTimeout = StopTimeout + 15*time.Second
)

// pollInterval is how often start and stop look at the service's state.
const pollInterval = 250 * time.Millisecond

// handle is one installed service as the Windows code opened it. The
// decisions about which request to send when, and how long to wait, are
// made by startService and stopService over this interface.
type handle interface {
	query() (Status, error)
	start() error
	control(Control) error
}

// startService starts the service and waits until it runs. A service that
// is already running is left alone; one that is still stopping is started
// once it has stopped; one that stops again while starting is reported with
// its exit code.
func startService(name string, h handle, timeout, interval time.Duration) error {
	deadline := time.Now().Add(timeout)
	started := false
	for {
		st, err := h.query()
		if err != nil {
			return explain(OpStart, name, err)
		}
		switch st.State {
		case Running:
			return nil
		case Stopped:
			if started {
				return failedToStart(name, st)
			}
			if err := h.start(); err != nil && !isErrno(err, errnoServiceAlreadyRunning) {
				return explain(OpStart, name, err)
			}
			started = true
			// The service manager has launched the process and
			// reports start-pending from here on; look again at once.
			continue
		}
		if !time.Now().Before(deadline) {
			return timedOut(OpStart, name, Running, st, timeout)
		}
		time.Sleep(interval)
	}
}

// stopService asks the service to stop and waits until it has. A stopped
// service is left alone. A service that is still starting cannot take Stop
// yet, so it is asked again once it runs.
func stopService(op Operation, name string, h handle, timeout, interval time.Duration) error {
	deadline := time.Now().Add(timeout)
	sent := false
	for {
		st, err := h.query()
		if err != nil {
			return explain(op, name, err)
		}
		switch st.State {
		case Stopped:
			return nil
		case Running, Paused:
			if !sent {
				err := h.control(ControlStop)
				switch {
				case err == nil:
					sent = true
				case isErrno(err, errnoServiceNotActive), isErrno(err, errnoBrokenPipe),
					isErrno(err, errnoNoData), isErrno(err, errnoPipeNotConnected):
					// It stopped, or is exiting, between query and
					// control; the next query sees that.
				case isErrno(err, errnoServiceCannotAcceptCtl):
					// Busy changing state; try again on the next poll.
				default:
					return explain(op, name, err)
				}
			}
		}
		if !time.Now().Before(deadline) {
			return timedOut(op, name, Stopped, st, timeout)
		}
		time.Sleep(interval)
	}
}

// isServiceManagerImage reports whether a process image (a file name or
// path, as Windows lists it) is the service manager's, services.exe.
func isServiceManagerImage(image string) bool {
	if i := strings.LastIndexAny(image, `\/`); i >= 0 {
		image = image[i+1:]
	}
	return strings.EqualFold(image, "services.exe")
}
