package service

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/eventlog"
)

// pid is this process's id, for the events.
func pid() int { return os.Getpid() }

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

// NodeShutdownSlack is how long past its grace periods the service waits
// for the node shutdown (NodeShutdown.Run) before it stops the node
// anyway: the kubelet's own work around the grace periods (reporting the
// node as shutting down, moving from one priority group to the next).
const NodeShutdownSlack = 5 * time.Second

// NodeShutdown is what a host shutdown runs before the node stops: the
// kubelet's node shutdown manager (patches/0013), which terminates the
// pods in priority order with their grace periods and preStop hooks and
// reports the node as shutting down.
type NodeShutdown struct {
	// Run terminates the pods and returns when they have stopped or their
	// grace periods are over.
	Run func() error
	// Grace is the longest Run takes: the shutdown grace periods summed.
	Grace time.Duration
}

// nodeShutdown is the registered NodeShutdown, nil until the kubelet's
// node shutdown manager has started.
var nodeShutdown atomic.Pointer[NodeShutdown]

// SetNodeShutdown registers ns as what the service runs at a host
// shutdown (pre-shutdown or Shutdown) before it stops the node; a later
// call replaces it, as a restarted kubelet registers again. An operator's
// Stop never runs it: edgecore stops and the pods keep running.
func SetNodeShutdown(ns NodeShutdown) { nodeShutdown.Store(&ns) }

// registeredNodeShutdown is the NodeShutdown in place, or nil.
func registeredNodeShutdown() *NodeShutdown { return nodeShutdown.Load() }

// eventLog is the Application log the service writes its life to, set by
// SetEventLog; nil writes nothing.
var eventLog atomic.Pointer[eventlog.Log]

// SetEventLog makes the service write its start, stop, host shutdown and
// failures to l (the Application log under eventlog.Source); nil stops it.
func SetEventLog(l eventlog.Log) {
	if l == nil {
		eventLog.Store(nil)
		return
	}
	eventLog.Store(&l)
}

// registeredEvents writes an event to the log SetEventLog set.
func registeredEvents(k eventlog.Kind, msg string) {
	if l := eventLog.Load(); l != nil {
		_ = eventlog.Write(*l, k, msg) // the log file has it too
	}
}

// WriteEvent writes an event of kind k at level lv to the log SetEventLog
// set, if any: for what the node says while it runs (a folder full).
func WriteEvent(k eventlog.Kind, lv eventlog.Level, msg string) {
	if l := eventLog.Load(); l != nil {
		_ = eventlog.WriteAt(*l, k, lv, msg) // the log file has it too
	}
}

// serving is set while the process answers the service manager.
var serving atomic.Bool

// Serving reports whether this process runs as a service under the
// service manager, and so can receive pre-shutdown: from the moment
// RunAsService's handler starts until it has reported stopped.
func Serving() bool { return serving.Load() }

// lifecycle is the behaviour of the process under the service manager,
// kept free of Windows calls so that it is tested everywhere.
type lifecycle struct {
	run  func() error
	stop func()
	// nodeShutdown is what a host shutdown runs first, nil (or a nil
	// result) for none.
	nodeShutdown      func() *NodeShutdown
	nodeShutdownSlack time.Duration
	stopTimeout       time.Duration
	progress          time.Duration
	// events writes an event of the service's life (nil: none).
	events func(k eventlog.Kind, msg string)
}

// event writes an event when l has somewhere to write it.
func (l lifecycle) event(k eventlog.Kind, format string, args ...any) {
	if l.events != nil {
		l.events(k, fmt.Sprintf(format, args...))
	}
}

// serve runs l.run, reports start-pending and then running, and answers
// controls until run returns or a Stop, Shutdown or pre-shutdown has been
// handled: all three are the one stop path, l.stop. A host shutdown
// (Shutdown or pre-shutdown) first runs the registered node shutdown. It
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
	l.event(eventlog.Start, "The edgecore service started (process %d). It logs to its log file; `edgecore.exe service status` shows its state.", pid())

	for {
		select {
		case err := <-done:
			if err != nil {
				l.event(eventlog.Refused, "The edgecore service stopped with an error, and the service manager restarts it after its recovery delay: %v. "+
					"The log file has the detail; fix the cause it names (`edgecore.exe preflight` checks the host).", err)
				return ExitRunFailed, fmt.Errorf("edgecore stopped with an error: %w", err)
			}
			l.event(eventlog.Refused, "The edgecore service stopped by itself, without a stop request; the service manager restarts it. The log file says why.")
			return ExitUnexpectedStop, errors.New("edgecore stopped without a stop request from the service manager")
		case c := <-controls:
			switch c {
			case ControlInterrogate:
				send(current)
			case ControlStop, ControlShutdown, ControlPreShutdown:
				if c != ControlStop {
					l.event(eventlog.PreShutdown, "The host is shutting down (%s): edgecore stops the node's pods by priority, then itself.", controlName(c))
				}
				err := l.shutdown(c, done, controls, set)
				if err != nil {
					l.event(eventlog.Stop, "The edgecore service stopped at the %s request, not cleanly: %v. The log file has the detail.", controlName(c), err)
				} else {
					l.event(eventlog.Stop, "The edgecore service stopped at the %s request.", controlName(c))
				}
				return ExitOK, err
			}
		}
	}
}

// shutdown stops the node for control c: at a host shutdown it first runs
// the node shutdown and waits up to its grace periods and
// nodeShutdownSlack for it; then it calls stop and waits up to
// stopTimeout for run to return. Meanwhile it reports stop-pending
// progress and answers Interrogate.
func (l lifecycle) shutdown(c Control, done <-chan error, controls <-chan Control, set func(report)) error {
	pending := report{State: StopPending, CheckPoint: 1, WaitHint: 2 * l.progress}
	set(pending)
	tick := time.NewTicker(l.progress)
	defer tick.Stop()
	// wait waits for result until bound, reporting progress; ended is
	// set when run returned first, with its error.
	wait := func(result <-chan error, bound time.Duration) (err error, timedOut, ended bool) {
		deadline := time.NewTimer(bound)
		defer deadline.Stop()
		for {
			select {
			case err := <-result:
				return err, false, false
			case err := <-done:
				return err, false, true
			case <-deadline.C:
				return nil, true, false
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

	var errs []error
	if ns := l.hostShutdown(c); ns != nil {
		result := make(chan error, 1)
		// On its own goroutine: a node shutdown that overruns must not
		// keep the service from stopping in time.
		go func() { result <- ns.Run() }()
		bound := ns.Grace + l.nodeShutdownSlack
		err, timedOut, ended := wait(result, bound)
		switch {
		case ended:
			return runEnded(c, err)
		case timedOut:
			errs = append(errs, fmt.Errorf("the node's pods were not all stopped within %v of the %s request; stopping edgecore anyway", bound, controlName(c)))
		case err != nil:
			errs = append(errs, fmt.Errorf("stopping the node's pods at the %s request: %w", controlName(c), err))
		}
	}

	// stop runs on its own goroutine so that one that blocks cannot keep
	// the service from reporting progress or from stopping in time.
	go l.stop()
	never := make(chan error)
	err, timedOut, _ := wait(never, l.stopTimeout)
	if timedOut {
		errs = append(errs, fmt.Errorf("edgecore did not finish shutting down within %v of the %s request; stopping anyway", l.stopTimeout, controlName(c)))
	} else if err != nil {
		errs = append(errs, runEnded(c, err))
	}
	return errors.Join(errs...)
}

// hostShutdown is the node shutdown to run for c: the registered one at a
// host shutdown, none for an operator's Stop.
func (l lifecycle) hostShutdown(c Control) *NodeShutdown {
	if c == ControlStop || l.nodeShutdown == nil {
		return nil
	}
	ns := l.nodeShutdown()
	if ns == nil || ns.Run == nil {
		return nil
	}
	return ns
}

// runEnded is the error for run returning err after the c request.
func runEnded(c Control, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("edgecore stopped with an error after the %s request: %w", controlName(c), err)
}

// forward passes each control the service manager sends on requests
// (converted by control) and each pre-shutdown request on preShutdown
// (nil: none) to controls, as ControlPreShutdown, until quit is closed.
// The second sender makes an administrator's rehearsal of a host shutdown
// the same control, handled the same way, as the service manager's.
func forward[R any](requests <-chan R, control func(R) Control, preShutdown <-chan struct{}, controls chan<- Control, quit <-chan struct{}) {
	for {
		var c Control
		select {
		case r := <-requests:
			c = control(r)
		case <-preShutdown:
			c = ControlPreShutdown
		case <-quit:
			return
		}
		select {
		case controls <- c:
		case <-quit:
			return
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
