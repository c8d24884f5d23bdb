package app

import (
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/core"

	"github.com/kubeedge-windows/edgecore/edge/logfile"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// runNode runs the edge node in the console or, when the Service Control
// Manager started the process, as the edgecore service. Either way the
// modules stop through the same graceful shutdown: Ctrl+C in a console, the
// service manager's Stop or Shutdown request as a service.
func runNode(cmd *cobra.Command, opts *Options, logs logfile.Options) error {
	asService, err := service.IsWindowsService()
	if err != nil {
		return fmt.Errorf("cannot tell whether the service manager started edgecore: %w", err)
	}
	if err := logs.Validate(runtime.GOOS); err != nil {
		return err
	}
	interactive := term.IsTerminal(int(os.Stderr.Fd()))
	dest := logfile.Decide(interactive, asService, cmd.Flags().Changed(logfile.FlagFile))
	if dest.UsesFile() {
		w, err := logfile.Open(logs)
		if err != nil {
			return err
		}
		defer w.Close()
		defer klog.Flush()
		if err := logfile.SetupKlog(dest, w); err != nil {
			return err
		}
	}
	if !asService {
		return Run(opts)
	}
	return service.RunAsService(service.DefaultName, runUntilFatal(opts), func() {
		core.Shutdown("stop requested by the service manager")
	})
}

// runUntilFatal runs the node and returns when it stops, or when an upstream
// module ends the process through klog.Fatal or klog.Exit, as edgehub does
// when the cloud refuses the join token. A service must report itself
// stopped, with a failure code, before its process goes: otherwise the
// service manager learns of the exit only from the process handle (late,
// under Wine) and cannot tell a failure from a stop.
func runUntilFatal(opts *Options) func() error {
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
		go func() { done <- Run(opts) }()
		select {
		case err := <-done:
			return err
		case code := <-fatal:
			return fmt.Errorf("edgecore stopped on a fatal error (exit code %d); the log file says why", code)
		}
	}
}
