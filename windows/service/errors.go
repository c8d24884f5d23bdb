package service

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Errors callers can test for with errors.Is; the returned errors wrap them
// in a sentence that names the service and the fix.
var (
	// ErrAlreadyInstalled: install found a service of that name.
	ErrAlreadyInstalled = errors.New("already installed")
	// ErrNotInstalled: there is no service of that name.
	ErrNotInstalled = errors.New("not installed")
	// ErrAccessDenied: the caller is not an elevated Administrator.
	ErrAccessDenied = errors.New("access denied")
	// ErrTimeout: the service did not reach the expected state in time.
	ErrTimeout = errors.New("timed out")
	// ErrNotSupported: the build is not for Windows.
	ErrNotSupported = errors.New("Windows services are available only in the Windows build of edgecore")
)

// Operation names the service subcommand an error belongs to.
type Operation string

const (
	OpInstall   Operation = "install"
	OpUninstall Operation = "uninstall"
	OpStart     Operation = "start"
	OpStop      Operation = "stop"
	OpStatus    Operation = "status"
	// OpConfigure changes an installed service's command line.
	OpConfigure Operation = "configure"
	// OpRun is the process running as the service.
	OpRun Operation = "run"
)

// errnoOf returns the Windows error number err carries. The Windows API
// returns syscall.Errno (x/sys/windows.Errno is the same type), which
// exists on every platform, so the explanations below are tested anywhere.
func errnoOf(err error) (uint32, bool) {
	var e syscall.Errno
	if errors.As(err, &e) {
		return uint32(e), true
	}
	return 0, false
}

func isErrno(err error, errno uint32) bool {
	n, ok := errnoOf(err)
	return ok && n == errno
}

// explain turns an error from the service manager into a sentence naming
// the service, what went wrong and what to do. The original error stays in
// the chain for errors.As.
func explain(op Operation, name string, err error) error {
	if err == nil {
		return nil
	}
	errno, _ := errnoOf(err)
	switch errno {
	case errnoAccessDenied:
		command := fmt.Sprintf("`%s service %s`", cli, op)
		if op == OpRun {
			command = cli
		}
		return fmt.Errorf("%s service %q: %w: run %s from a PowerShell or command prompt started with \"Run as administrator\"",
			op, name, ErrAccessDenied, command)
	case errnoServiceExists:
		return alreadyInstalled(name)
	case errnoServiceDoesNotExist:
		return fmt.Errorf("%s service %q: the service is %w; install it with `%s service install` (or `%s join`)",
			op, name, ErrNotInstalled, cli, cli)
	case errnoServiceMarkedForDelete:
		return fmt.Errorf("%s service %q: the service is marked for deletion but still open somewhere; close services.msc, Event Viewer and any `sc.exe` or PowerShell holding it, then try again (a reboot also clears it)",
			op, name)
	case errnoServiceDisabled:
		return fmt.Errorf("%s service %q: the service is disabled; enable it with `Set-Service %s -StartupType Automatic`", op, name, name)
	case errnoServiceCannotAcceptCtl:
		return fmt.Errorf("%s service %q: the service is starting or stopping and cannot take the request now; wait a few seconds and check `%s service status`", op, name, cli)
	case errnoServiceDependencyFail:
		return fmt.Errorf("%s service %q: a service it depends on failed to start: list them with `Get-Service %s -RequiredServices`, "+
			"start the one that is stopped (for containerd, `Start-Service containerd`; its log says why it fails), then try again", op, name, name)
	case errnoServiceDependencyDeleted:
		return fmt.Errorf("%s service %q: a service it depends on is no longer installed: list them with `Get-Service %s -RequiredServices` "+
			"and install it again (for containerd, `containerd.exe --register-service`), or remove the dependency with `sc.exe config %s depend= /`",
			op, name, name, name)
	case errnoFailedServiceConnect:
		return fmt.Errorf("%s service %q: this process was not started by the service manager; start the service with `%s service start`, or run edgecore in a console without service mode", op, name, cli)
	}
	return fmt.Errorf("%s service %q: %w", op, name, err)
}

// restartOnErrorExitUnsupported is the warning for a service manager that
// does not know Config.RestartOnErrorExit's setting (Wine's does not).
const restartOnErrorExitUnsupported = "this service manager cannot restart a service that stops with an error code; " +
	"the recovery actions apply only when the process crashes"

// preShutdownUnsupported is the warning for a service manager that does
// not know Config.PreShutdownTimeout's setting.
const preShutdownUnsupported = "this service manager cannot set how long a host shutdown waits for the service; " +
	"Windows' default applies (10 s on Windows Server 2019 and later), which may cut edgecore's graceful shutdown short"

// optionalSetting decides what a failure to apply an optional setting
// means: a service manager that does not know the setting (invalid level)
// gets the service without it and the warning; any other error fails.
func optionalSetting(err error, warning string) (string, error) {
	switch {
	case err == nil:
		return "", nil
	case isErrno(err, errnoInvalidLevel):
		return warning, nil
	}
	return "", err
}

func alreadyInstalled(name string) error {
	return fmt.Errorf("install service %q: the service is %w; remove it first with `%s service uninstall`, then install again",
		name, ErrAlreadyInstalled, cli)
}

func timedOut(op Operation, name string, want State, last Status, timeout time.Duration) error {
	hint := fmt.Sprintf("check `%s service status` and the log file", cli)
	if want == Stopped && last.ProcessID != 0 {
		hint += fmt.Sprintf("; if it does not stop, end it with `taskkill /F /PID %d`", last.ProcessID)
	}
	return fmt.Errorf("%s service %q: %w after %v waiting for it to be %s; it is %s; %s",
		op, name, ErrTimeout, timeout, want, last.State, hint)
}

// failedToStart is the error for a service that stopped while starting.
func failedToStart(name string, st Status) error {
	why := exitDescription(st.Win32ExitCode, st.ServiceExitCode)
	if why == "" {
		why = "it reported no error"
	}
	return fmt.Errorf("start service %q: it stopped while starting (%s); see the log file, and run `%s --config <file>` in a console to see the error directly",
		name, why, cli)
}
