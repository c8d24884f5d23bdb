package core

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
)

// RestartType says when a module whose Start returned is started again.
type RestartType string

const (
	// RestartTypeAlways starts the module again whenever Start returns.
	RestartTypeAlways RestartType = "Always"
	// RestartTypeOnFailure starts it again only when Start panicked.
	RestartTypeOnFailure RestartType = "OnFailure"
)

// Defaults of a ModuleRestartPolicy that leaves them out.
const (
	DefaultRestartIntervalLimit = 30 * time.Second
	DefaultIntervalSecond       = 1
)

// ModuleRestartPolicy is how a module asks to be kept running: the bus
// starts it again after Start returns (Always) or panics (OnFailure). The
// panic value is the failure, since Start returns nothing.
type ModuleRestartPolicy struct {
	RestartType RestartType
	// Retries bounds the restarts; 0 restarts without end.
	Retries int32
	// IntervalSecond is the first wait before a restart (default 1 s).
	IntervalSecond int32
	// IntervalTimeGrowthRate multiplies the wait after each restart; a
	// rate of 1 or less keeps it constant.
	IntervalTimeGrowthRate float64
	// RestartIntervalLimit caps the wait (default 30 s).
	RestartIntervalLimit time.Duration
	// ErrorHandler is called with the last failure once Retries is used
	// up; without it the bus only logs.
	ErrorHandler func(err error)
}

// legacyRestartPolicy is what EnableModuleRestart gives modules that bring
// no policy of their own: KubeEdge v1.20's behaviour, a restart whenever
// Start returns or panics, the wait doubling from 1 s up to 30 s.
var legacyRestartPolicy = ModuleRestartPolicy{
	RestartType:            RestartTypeAlways,
	IntervalTimeGrowthRate: 2,
}

// second is the unit of IntervalSecond; a variable so that tests can
// shorten it.
var second = time.Second

// policyOf is the restart policy runModule applies to m, nil for none.
func policyOf(m Module) *ModuleRestartPolicy {
	if p := m.RestartPolicy(); p != nil {
		return p
	}
	if IsModuleRestartEnabled() {
		p := legacyRestartPolicy
		return &p
	}
	return nil
}

// PanicHandler is told, on the module's own goroutine, what a module that
// has no restart policy panicked with, and the stack where it panicked. It
// lets a program end through its own stop path (a Windows service reports
// itself stopped with a failure code) instead of dying in the runtime's
// panic, which a service manager learns of only from the process handle.
// It should not return; if it does, the module counts as stopped.
type PanicHandler func(module string, value any, stack []byte)

var panicHandler atomic.Pointer[PanicHandler]

// SetPanicHandler sets the PanicHandler; nil restores the default, where
// the panic takes the process down.
func SetPanicHandler(h PanicHandler) {
	if h == nil {
		panicHandler.Store(nil)
		return
	}
	panicHandler.Store(&h)
}

// runModule runs m.Start and keeps it running as its restart policy says.
// Without a policy a panic goes to the PanicHandler or, without one, is
// left alone, so that it takes the process down and a supervisor restarts
// it as a whole. A restart keeps the module's
// inbox and what is queued in it: it does not call AddModule, which gives a
// module a fresh, empty inbox as upstream's does, so messages sent while
// the module was down are not lost.
func runModule(m Module) {
	policy := policyOf(m)
	if policy == nil {
		// Recovering only when someone handles the panic keeps the
		// runtime's own report, with the panicking goroutine's frames,
		// for everyone else.
		if h := panicHandler.Load(); h != nil {
			defer func() {
				if r := recover(); r != nil {
					// Deferred calls run on top of the panicking frames,
					// so the stack still shows where it panicked.
					(*h)(m.Name(), r, debug.Stack())
				}
			}()
		}
		m.Start()
		return
	}
	interval := time.Duration(policy.IntervalSecond) * second
	if policy.IntervalSecond <= 0 {
		interval = DefaultIntervalSecond * second
	}
	var restarts int32
	for {
		err := startRecovering(m)
		if err == nil && policy.RestartType == RestartTypeOnFailure {
			return
		}
		select {
		case <-beehiveContext.Done():
			// Start returned because the node is stopping.
			return
		default:
		}
		restarts++
		if policy.Retries > 0 && restarts > policy.Retries {
			klog.Errorf("module %s stopped and will not be restarted: its %d restarts are used up (last failure: %v)",
				m.Name(), policy.Retries, err)
			if policy.ErrorHandler != nil {
				policy.ErrorHandler(err)
			}
			return
		}
		if err != nil {
			klog.Errorf("module %s failed: %v; restarting in %v", m.Name(), err, interval)
		} else {
			klog.Warningf("module %s stopped; restarting in %v", m.Name(), interval)
		}
		select {
		case <-beehiveContext.Done():
			return
		case <-time.After(interval):
		}
		interval = nextInterval(interval, policy.RestartIntervalLimit, policy.IntervalTimeGrowthRate)
	}
}

// nextInterval grows the wait between restarts by rate up to limit
// (DefaultRestartIntervalLimit when 0); a rate of 1 or less keeps it.
func nextInterval(cur, limit time.Duration, rate float64) time.Duration {
	if rate <= 1 {
		return cur
	}
	if limit <= 0 {
		limit = DefaultRestartIntervalLimit
	}
	if cur >= limit {
		return limit
	}
	next := time.Duration(float64(cur) * rate)
	if next > limit {
		next = limit
	}
	return next
}
