package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/term"
	"k8s.io/klog/v2"

	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/crashlog"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/lifecycle"
	"github.com/kubeedge-windows/edgecore/internal/logfile"
	"github.com/kubeedge-windows/edgecore/internal/reconnect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/eventlog"
	"github.com/kubeedge-windows/edgecore/windows/service"
	"github.com/kubeedge-windows/edgecore/windows/stackdump"
	"github.com/kubeedge-windows/edgecore/windows/stdhandle"
)

// Main runs the node in the console or, when the Service Control Manager
// started the process, as the edgecore service. Either way the node runs
// under the one context of lifecycle.NodeContext: Ctrl+C ends it in a
// console, the service manager's Stop, Shutdown or pre-shutdown as a
// service; nothing else stops it. At a host shutdown the service first has
// the kubelet stop the pods (installNodeShutdown); an administrator
// rehearses that through the event Global\preshutdown-<pid>, which the
// service handles as the service manager's pre-shutdown. As a service,
// standard error goes to panic.log beside the log file; in both modes the
// event Global\stackdump-<pid> asks for a dump of every goroutine's stack.
// opts are complete and valid (Options.Complete, Validate); the node runs
// on d's host.
func Main(opts Options, d *deps.Dependencies) (err error) {
	asService, err := service.IsWindowsService()
	if err != nil {
		return fmt.Errorf("cannot tell whether the service manager started edgecore: %w", err)
	}
	opts.asService = asService
	// Before anything else can print: what a service prints to standard
	// error, a panic's stacks and the error main prints when Main fails
	// included, goes nowhere unless it is redirected.
	var logPanicLog, logEventLog func()
	// inLifecycle is set once the service's lifecycle writes the events
	// of how the run ends (windows/service).
	inLifecycle := false
	if asService {
		var earlier string
		var crashed bool
		logPanicLog, earlier, crashed = capturePanics(opts.Logs.File)
		// Open before anything can fail, so that a service that cannot
		// start (its log file cannot be opened) says why in the
		// Application log, where nothing else would.
		var closeEventLog func()
		logEventLog, closeEventLog = openEventLog(eventlog.Open, earlier, crashed)
		defer closeEventLog()
		defer func() {
			if !inLifecycle {
				refusedToStart(err)
			}
		}()
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
		opts.hubStatus = reconnect.StatusPath(d.Host.GOOS, opts.Logs.File)
		opts.logFile = opts.Logs.File
	}
	opts.diskAlert = diskAlert(asService, dest == logfile.File, os.Stderr, service.WriteEvent)
	if logPanicLog != nil {
		logPanicLog()
		logEventLog()
	}
	defer serveStackDumps(filepath.Dir(opts.Logs.File), asService)()
	ctx, stop, release := lifecycle.NodeContext(context.Background(), asService, runtime.GOOS, lifecycle.ProcessSignals{})
	defer release()
	if !asService {
		return Run(ctx, opts, d, HostWiring())
	}
	preShutdown, closePreShutdown := servePreShutdownRequests()
	defer closePreShutdown()
	inLifecycle = true
	return service.RunAsService(service.DefaultName, runUntilFatal(ctx, opts, d), func() {
		stop("the service manager asked the service to stop")
	}, preShutdown)
}

// runUntilFatal runs the node and returns when it stops, or when upstream
// code ends the process through klog's exit hook: klog.Fatal and klog.Exit
// (and modulePanicked, for a module that panics, as edgehub does when the
// cloud refuses the join token), and edged's and
// eventbus's start-up failures, which patches/0003 routes through the same
// hook instead of os.Exit. A service must report itself stopped, with a
// failure code, before its process goes: otherwise the service manager
// learns of the exit only from the process handle (late, under Wine) and
// cannot tell a failure from a stop.
func runUntilFatal(ctx context.Context, opts Options, d *deps.Dependencies) func() error {
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
		go func() { done <- Run(ctx, opts, d, HostWiring()) }()
		select {
		case err := <-done:
			return err
		case code := <-fatal:
			return fmt.Errorf("edgecore stopped on a fatal error (exit code %d); the log file says why", code)
		}
	}
}

// modulePanicked is the bus's PanicHandler: a module that panics in Start
// (KubeEdge v1.23's edgehub does when the cloud refuses the join token)
// ends the node through klog's exit hook, as klog.Fatal does, so that a
// service reports itself stopped with a failure code. The panic and its
// stack go to standard error, which for a service is panic.log, as the
// runtime's own report would, and the reason to the log file, where join
// and an operator look first.
func modulePanicked(module string, value any, stack []byte) { panicked(module, value, stack) }

// panicked is modulePanicked for a node whose secrets (the join token) a
// panic's message must not repeat: upstream's certificate manager quotes
// a token it cannot read. URLs lose their credentials too (redact).
func panicked(module string, value any, stack []byte, secrets ...string) {
	msg := redact.String(fmt.Sprint(value), secrets...)
	fmt.Fprintf(os.Stderr, "panic: %s\n\nmodule %s panicked in Start:\n%s", msg, module, redact.String(string(stack), secrets...))
	klog.Errorf("module %s panicked: %s", module, msg)
	klog.Flush()
	klog.OsExit(2)
}

// capturePanics points the process's standard error at the panic log
// beside logFile, keeping an earlier one that is not empty as panic.log.old.
// It returns what to log once the log is open, what happened to the
// earlier panic log, and whether it held a crash's report. A service that
// cannot keep its panic log still runs the node: the failure is logged
// instead.
func capturePanics(logFile string) (logIt func(), earlier string, crashed bool) {
	path := crashlog.PanicLogPath(logFile)
	f, note, crashed, err := openPanicLog(path)
	earlier = note
	if err == nil {
		// f stays open for the life of the process: the runtime writes a
		// panic to it as the process dies.
		if err = stdhandle.RedirectStderr(f); err != nil {
			f.Close()
		}
	}
	return func() {
		switch {
		case err != nil:
			klog.ErrorS(err, "Standard error is not redirected to the panic log: a panic of this run leaves no trace", "path", path)
		case note != "":
			klog.InfoS("Standard error and panics of the service go to the panic log", "path", path, "earlier", note)
		default:
			klog.InfoS("Standard error and panics of the service go to the panic log", "path", path)
		}
	}, earlier, crashed
}

// openPanicLog is crashlog.OpenPanicLog, also saying whether the earlier
// panic log it kept (the previous run's standard error) holds a crash's
// report.
func openPanicLog(path string) (f *os.File, note string, crashed bool, err error) {
	// Read before OpenPanicLog moves it.
	crashed = crashlog.ShowsCrash(path)
	f, note, err = crashlog.OpenPanicLog(path)
	return f, note, crashed && note != "", err
}

// openEventLog has the service write its life to the Application log
// (source eventlog.Source, which `service install` registers), opened with
// open; first, when the previous run crashed (its panic log, kept at start
// as earlierPanic, holds a crash's report), the restart after the crash.
// A previous run that ended with an error wrote its own event (107) and
// is no crash. It returns what to log once the log file is open, and what
// closes the event log. Without the event log the service runs all the
// same: the log file has everything.
func openEventLog(open func(source string) (eventlog.Log, error), earlierPanic string, crashed bool) (logIt, closeIt func()) {
	l, err := open(eventlog.Source)
	if err != nil {
		return func() { klog.InfoS("The service's events go to the log file only", "reason", err) }, func() {}
	}
	if crashed {
		_ = eventlog.Write(l, eventlog.Restart, "The edgecore service was restarted after a crash of its previous run: "+earlierPanic+
			". Read that panic log and the log file around its time.")
	}
	service.SetEventLog(l)
	logIt = func() {
		klog.InfoS("The service's start, stop and failures also go to the Application log", "source", eventlog.Source)
	}
	closeIt = func() {
		service.SetEventLog(nil)
		l.Close()
	}
	return logIt, closeIt
}

// refusedToStart writes event 107 for a service that ends with err before
// its lifecycle runs (which writes its own): its log file could not be
// opened, so the Application log is the one place that says why.
func refusedToStart(err error) {
	if err == nil {
		return
	}
	service.WriteEvent(eventlog.Refused, eventlog.Error, fmt.Sprintf("The edgecore service could not start: %v. "+
		"Fix the cause it names (`edgecore.exe preflight` checks the host), then start the service.", err))
}

// serveStackDumps writes every goroutine's stack to a file in dir each time
// the event Global\stackdump-<pid> is signalled (`edgecore.exe service
// dump` does that), for as long as the process runs, in a console as well
// as a service: a hung node is diagnosed from these. The returned function
// stops it. Creating the event needs SYSTEM or an elevated prompt; without
// it the node runs without dumps on request, which is an error only for
// the service (it runs as SYSTEM).
func serveStackDumps(dir string, asService bool) func() {
	if runtime.GOOS != "windows" {
		// Go dumps every goroutine on SIGQUIT there.
		return func() {}
	}
	pid := uint32(os.Getpid())
	ev, err := stackdump.Create(stackdump.EventName(pid), acl.EventSDDL)
	if err != nil {
		if asService {
			klog.ErrorS(err, "Stack dumps on request are off: `edgecore.exe service dump` will not work")
		} else {
			klog.InfoS("Stack dumps on request are off", "reason", err)
		}
		return func() {}
	}
	klog.InfoS("Signal the event to write every goroutine's stack to a file", "event", ev.Name(), "directory", dir)
	// Not the node's context: a shutdown that hangs is exactly when a
	// dump is wanted.
	ctx, cancel := context.WithCancel(context.Background())
	done := crashlog.ServeStackDumps(ctx, ev,
		func() (string, error) { return crashlog.WriteStackDump(dir, pid, time.Now()) },
		func(path string, err error) {
			if err != nil {
				klog.ErrorS(err, "Stack dump failed")
			} else {
				klog.InfoS("Wrote a stack dump of every goroutine", "file", path)
			}
			// Whoever asked for the dump reads the log next.
			klog.Flush()
		})
	return func() {
		cancel()
		<-done
	}
}
