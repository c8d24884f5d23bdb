package core

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/common"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
)

var (
	restartEnabled atomic.Bool

	// stopCh holds at most one pending stop request; later ones add nothing.
	stopCh = make(chan string, 1)
)

// EnableModuleRestart makes a module without a restart policy of its own
// (see ModuleRestartPolicy) start again after a back-off when it returns or
// panics while the process is still running, as KubeEdge v1.20's bus did.
// KubeEdge v1.23's modules bring their own policies instead.
func EnableModuleRestart() { restartEnabled.Store(true) }

// IsModuleRestartEnabled reports whether module restart is on.
func IsModuleRestartEnabled() bool { return restartEnabled.Load() }

// StartModules initialises the channel context, puts every enabled module and
// its group on the bus and starts each module on its own goroutine.
func StartModules() {
	beehiveContext.InitContext([]string{common.MsgCtxTypeChannel})
	for name, info := range snapshot() {
		beehiveContext.AddModule(&common.ModuleInfo{ModuleName: name, ModuleType: info.contextType})
		beehiveContext.AddModuleGroup(name, info.module.Group())
		go runModule(info.module)
		klog.Infof("starting module %s", name)
	}
	for _, name := range disabled() {
		klog.V(2).Infof("module %s is disabled and not started", name)
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

// Shutdown asks a running RunContext or GracefulShutdown to stop, as if its
// context had ended. It never blocks.
func Shutdown(reason string) {
	select {
	case stopCh <- reason:
	default:
	}
}

// shutdownSignals are the signals upstream's GracefulShutdown stops on, so
// that cloudcore (which runs on this bus in the end-to-end scenario) stops
// cleanly on the same ones. On Windows, Go raises only SIGINT (Ctrl+C,
// Ctrl+Break) and SIGTERM (console close, log-off, shutdown): that is why
// edgecore for Windows does not use GracefulShutdown.
var shutdownSignals = []os.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM,
	syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT}

// GracefulShutdown is upstream's entry point for mains that own no context
// (cloudcore, upstream's edgecore): it blocks until the process gets one of
// upstream's shutdown signals, a Shutdown call, or a module cancels the
// global context, then shuts the modules down. The signal handler lives
// only as long as this call; edgecore for Windows uses ShutdownWhen with a
// context of its own instead, so that it alone decides which signals stop it.
func GracefulShutdown() {
	ctx, stop := signal.NotifyContext(context.Background(), shutdownSignals...)
	defer stop()
	ShutdownWhen(ctx)
}

// ShutdownWhen blocks until ctx ends, a Shutdown call, or a module cancels
// the global context, then cancels the global context and cleans up every
// module. It installs no signal handler.
func ShutdownWhen(ctx context.Context) {
	select {
	case <-ctx.Done():
		klog.Infof("Shutting down: %v", context.Cause(ctx))
	case reason := <-stopCh:
		klog.Infof("Shutdown requested: %s", reason)
	case <-beehiveContext.Done():
		klog.Info("Global context cancelled, shutting down")
	}
	beehiveContext.Cancel()
	for name := range snapshot() {
		klog.Infof("Cleanup module %s", name)
		beehiveContext.Cleanup(name)
	}
}

// Run starts the modules and blocks until they are shut down by a signal
// (see GracefulShutdown).
func Run() {
	StartModules()
	GracefulShutdown()
}

// RunContext starts the modules and blocks until ctx ends (see
// ShutdownWhen). It installs no signal handler.
func RunContext(ctx context.Context) {
	StartModules()
	ShutdownWhen(ctx)
}
