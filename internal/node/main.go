package node

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/term"
	"k8s.io/klog/v2"

	"github.com/kubeedge-windows/edgecore/internal/lifecycle"
	"github.com/kubeedge-windows/edgecore/internal/logfile"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Main runs the node in the console or, when the Service Control Manager
// started the process, as the edgecore service. Either way the node runs
// under the one context of lifecycle.NodeContext: Ctrl+C ends it in a
// console, the service manager's Stop or Shutdown as a service; nothing
// else stops it.
func Main(opts Options) error {
	asService, err := service.IsWindowsService()
	if err != nil {
		return fmt.Errorf("cannot tell whether the service manager started edgecore: %w", err)
	}
	if err := opts.Validate(runtime.GOOS); err != nil {
		return err
	}
	interactive := term.IsTerminal(int(os.Stderr.Fd()))
	dest := logfile.Decide(interactive, asService, opts.LogFileGiven)
	if dest.UsesFile() {
		w, err := logfile.Open(opts.Logs)
		if err != nil {
			return err
		}
		defer w.Close()
		defer klog.Flush()
		if err := logfile.SetupKlog(dest, w); err != nil {
			return err
		}
	}
	ctx, stop, release := lifecycle.NodeContext(context.Background(), asService, runtime.GOOS, lifecycle.ProcessSignals{})
	defer release()
	if !asService {
		return Run(ctx, opts)
	}
	return service.RunAsService(service.DefaultName, runUntilFatal(ctx, opts), func() {
		stop("the service manager asked the service to stop")
	})
}

// runUntilFatal runs the node and returns when it stops, or when upstream
// code ends the process through klog's exit hook: klog.Fatal and klog.Exit
// (edgehub, when the cloud refuses the join token), and edged's and
// eventbus's start-up failures, which patches/0003 routes through the same
// hook instead of os.Exit. A service must report itself stopped, with a
// failure code, before its process goes: otherwise the service manager
// learns of the exit only from the process handle (late, under Wine) and
// cannot tell a failure from a stop.
func runUntilFatal(ctx context.Context, opts Options) func() error {
	fatal := make(chan int, 1)
	klog.OsExit = func(code int) {
		select {
		case fatal <- code:
		default:
		}
		// The service handler reports the stop and ends the process.
		select {}
	}
	return func() error {
		done := make(chan error, 1)
		go func() { done <- Run(ctx, opts) }()
		select {
		case err := <-done:
			return err
		case code := <-fatal:
			return fmt.Errorf("edgecore stopped on a fatal error (exit code %d); the log file says why", code)
		}
	}
}
