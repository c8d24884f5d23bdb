package core

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/common"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
)

// Restart back-off: doubles from restartBackoffInitial up to restartBackoffMax.
// Variables so that tests can shorten them.
var (
	restartBackoffInitial = time.Second
	restartBackoffMax     = 30 * time.Second
)

var (
	restartEnabled atomic.Bool

	// stopCh holds at most one pending stop request; later ones add nothing.
	stopCh = make(chan string, 1)
)

// EnableModuleRestart makes a module that returns or panics while the process
// is still running start again after a back-off.
func EnableModuleRestart() { restartEnabled.Store(true) }

// IsModuleRestartEnabled reports whether module restart is on.
func IsModuleRestartEnabled() bool { return restartEnabled.Load() }

// StartModules initialises the channel context, puts every enabled module and
// its group on the bus and starts each module on its own goroutine.
func StartModules() {
	beehiveContext.InitContext([]string{common.MsgCtxTypeChannel})
	for name, info := range GetModules() {
		beehiveContext.AddModule(&common.ModuleInfo{ModuleName: name, ModuleType: info.contextType})
		beehiveContext.AddModuleGroup(name, info.module.Group())
		go runModule(info.module)
		klog.Infof("starting module %s", name)
	}
	for _, name := range disabled() {
		klog.V(2).Infof("module %s is disabled and not started", name)
	}
}

// runModule runs m.Start, and again after a back-off if restart is enabled
// and the process is not shutting down. Without restart a panic is left alone
// so that it takes the process down and a supervisor restarts it as a whole.
func runModule(m Module) {
	if !IsModuleRestartEnabled() {
		m.Start()
		return
	}
	backoff := restartBackoffInitial
	for {
		began := time.Now()
		err := startRecovering(m)
		select {
		case <-beehiveContext.Done():
			return
		default:
		}
		// A module that ran for longer than the longest back-off was
		// healthy for a while: start counting from the beginning again.
		if time.Since(began) > restartBackoffMax {
			backoff = restartBackoffInitial
		}
		if err != nil {
			klog.Errorf("module %s failed: %v; restarting in %v", m.Name(), err, backoff)
		} else {
			klog.Warningf("module %s stopped; restarting in %v", m.Name(), backoff)
		}
		select {
		case <-beehiveContext.Done():
			return
		case <-time.After(backoff):
		}
		backoff *= 2
		if backoff > restartBackoffMax {
			backoff = restartBackoffMax
		}
	}
}

// startRecovering runs m.Start and turns a panic into an error.
func startRecovering(m Module) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	m.Start()
	return nil
}

// Shutdown asks the process to stop, as Ctrl+C does. The Windows service
// handler calls it for Stop and Shutdown requests. It never blocks.
func Shutdown(reason string) {
	select {
	case stopCh <- reason:
	default:
	}
}

// GracefulShutdown blocks until the process is asked to stop (a signal, a
// Shutdown call, or the global context cancelled by a module), then cancels
// the global context and cleans up every module.
func GracefulShutdown() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, shutdownSignals...)
	defer signal.Stop(signals)

	select {
	case s := <-signals:
		klog.Infof("Got signal %v, shutting down", s)
	case reason := <-stopCh:
		klog.Infof("Shutdown requested: %s", reason)
	case <-beehiveContext.Done():
		klog.Info("Global context cancelled, shutting down")
	}
	beehiveContext.Cancel()
	for name := range GetModules() {
		klog.Infof("Cleanup module %s", name)
		beehiveContext.Cleanup(name)
	}
}

// Run starts the modules and blocks until they are shut down.
func Run() {
	StartModules()
	GracefulShutdown()
}

// shutdownSignals are the signals that stop the process. On Windows, Go maps
// Ctrl+C, Ctrl+Break and console close to os.Interrupt and SIGTERM.
var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
