//go:build windows

package service

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/eventlog"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

// Install creates the service c describes, without starting it. It fails
// with ErrAlreadyInstalled if a service of that name exists. A service whose
// description or recovery actions cannot be set is removed again, so that
// install can simply be run again. The warnings name settings the service
// manager does not support and that were left out, and a container runtime
// service that is not installed to depend on; print them.
func Install(c Config) (warnings []string, err error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cmdline, err := c.CommandLine()
	if err != nil {
		return nil, err
	}
	m, err := mgr.Connect()
	if err != nil {
		return nil, explain(OpInstall, c.Name, err)
	}
	defer m.Disconnect()
	if s, err := m.OpenService(c.Name); err == nil {
		s.Close()
		return nil, alreadyInstalled(c.Name)
	}

	name, err := windows.UTF16PtrFromString(c.Name)
	if err != nil {
		return nil, err
	}
	// No display name (nil) makes the service manager show the name.
	var display *uint16
	if c.DisplayName != "" {
		if display, err = windows.UTF16PtrFromString(c.DisplayName); err != nil {
			return nil, err
		}
	}
	path, err := windows.UTF16PtrFromString(cmdline)
	if err != nil {
		return nil, err
	}
	deps, warnings, err := c.dependencies(func(name string) (bool, error) { return installed(m.Handle, name) })
	if err != nil {
		return nil, explain(OpInstall, c.Name, err)
	}
	var depBlock *uint16
	if len(deps) > 0 {
		depBlock = &stringBlock(deps)[0]
	}
	// CreateService itself rather than mgr.CreateService, which would quote
	// the arguments again by its own rules: the command line installed is
	// exactly the one Config.CommandLine built and the tests check. An
	// empty service account means LocalSystem.
	h, err := windows.CreateService(m.Handle, name, display, windows.SERVICE_ALL_ACCESS,
		windows.SERVICE_WIN32_OWN_PROCESS, uint32(c.StartType), windows.SERVICE_ERROR_NORMAL,
		path, nil, nil, depBlock, nil, nil)
	if err != nil {
		return nil, explain(OpInstall, c.Name, err)
	}
	s := &mgr.Service{Name: c.Name, Handle: h}
	defer s.Close()
	more, err := configure(s, c)
	warnings = append(warnings, more...)
	if err != nil {
		if derr := s.Delete(); derr != nil {
			return nil, fmt.Errorf("install service %q: %v; removing the incomplete service also failed (%v): remove it with `sc.exe delete %s`",
				c.Name, err, derr, c.Name)
		}
		return nil, fmt.Errorf("install service %q: %w; the service was removed again", c.Name, err)
	}
	if c.EventSource != "" {
		if err := eventlog.Install(c.EventSource); err != nil {
			warnings = append(warnings, fmt.Sprintf("the event source %q could not be registered in the Application log (%v): "+
				"the service's start, stop and failures are in its log file only", c.EventSource, err))
		}
	}
	return warnings, nil
}

// installed reports whether the service name exists, asking only for the
// right to query its status.
func installed(scm windows.Handle, name string) (bool, error) {
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return false, err
	}
	h, err := windows.OpenService(scm, name16, windows.SERVICE_QUERY_STATUS)
	if isErrno(err, errnoServiceDoesNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	windows.CloseServiceHandle(h)
	return true, nil
}

// preShutdownInfo is SERVICE_PRESHUTDOWN_INFO, which golang.org/x/sys at
// the version this module pins does not have.
type preShutdownInfo struct {
	TimeoutMillis uint32
}

// failureActionsFlag is SERVICE_FAILURE_ACTIONS_FLAG. golang.org/x/sys at
// the version this module pins has the info level but not the structure.
type failureActionsFlag struct {
	FailureActionsOnNonCrashFailures int32 // a Win32 BOOL
}

// configure sets what CreateService cannot: the description, the recovery
// actions and when they apply, and the pre-shutdown time-out.
func configure(s *mgr.Service, c Config) (warnings []string, err error) {
	if c.Description != "" {
		text, err := windows.UTF16PtrFromString(c.Description)
		if err != nil {
			return nil, err
		}
		desc := windows.SERVICE_DESCRIPTION{Description: text}
		if err := windows.ChangeServiceConfig2(s.Handle, windows.SERVICE_CONFIG_DESCRIPTION, (*byte)(unsafe.Pointer(&desc))); err != nil {
			return nil, fmt.Errorf("setting the description: %w", err)
		}
	}
	actions := make([]mgr.RecoveryAction, len(c.RestartDelays))
	for i, d := range c.RestartDelays {
		actions[i] = mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: d}
	}
	if err := s.SetRecoveryActions(actions, c.ResetPeriodSeconds()); err != nil {
		return nil, fmt.Errorf("setting the recovery actions: %w", err)
	}
	if c.RestartOnErrorExit {
		flag := failureActionsFlag{FailureActionsOnNonCrashFailures: 1}
		err := windows.ChangeServiceConfig2(s.Handle, windows.SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, (*byte)(unsafe.Pointer(&flag)))
		if w, err := optionalSetting(err, restartOnErrorExitUnsupported); err != nil {
			return nil, fmt.Errorf("enabling recovery on error exits: %w", err)
		} else if w != "" {
			warnings = append(warnings, w)
		}
	}
	if len(c.Environment) > 0 {
		if err := setEnvironment(s.Name, c.Environment); err != nil {
			return nil, fmt.Errorf("setting the environment: %w", err)
		}
	}
	if c.PreShutdownTimeout > 0 {
		info := preShutdownInfo{TimeoutMillis: uint32(c.PreShutdownTimeout / time.Millisecond)}
		err := windows.ChangeServiceConfig2(s.Handle, windows.SERVICE_CONFIG_PRESHUTDOWN_INFO, (*byte)(unsafe.Pointer(&info)))
		if w, err := optionalSetting(err, preShutdownUnsupported); err != nil {
			return nil, fmt.Errorf("setting the pre-shutdown time-out: %w", err)
		} else if w != "" {
			warnings = append(warnings, w)
		}
	}
	return warnings, nil
}

// setEnvironment writes the service key's Environment value (REG_MULTI_SZ),
// which the service manager gives the service's process as its
// environment block; deleting the service deletes it with the key.
func setEnvironment(name string, env []string) error {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, servicesKey+name, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringsValue("Environment", env)
}

// queryEnvironment reads the service key's Environment value, nil when
// there is none or it cannot be read (status still says the rest).
func queryEnvironment(name string) []string {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, servicesKey+name, registry.QUERY_VALUE)
	if err != nil {
		return nil
	}
	defer k.Close()
	env, _, err := k.GetStringsValue("Environment")
	if err != nil {
		return nil
	}
	return env
}

// Uninstall stops the service, waiting up to stopTimeout, and deletes it.
// It fails with ErrNotInstalled if there is no such service.
func Uninstall(name string, stopTimeout time.Duration) error {
	return withService(OpUninstall, name, func(s *mgr.Service) error {
		if err := stopService(OpUninstall, name, mgrHandle{s}, stopTimeout, pollInterval); err != nil {
			return err
		}
		if err := s.Delete(); err != nil {
			return explain(OpUninstall, name, err)
		}
		if name == DefaultName {
			// The event source Install registered; the events written
			// stay in the Application log.
			_ = eventlog.Remove(eventlog.Source)
		}
		return nil
	})
}

// Start starts the service and waits up to timeout until it runs.
func Start(name string, timeout time.Duration) error {
	return withService(OpStart, name, func(s *mgr.Service) error {
		return startService(name, mgrHandle{s}, timeout, pollInterval)
	})
}

// Stop stops the service and waits up to timeout until it has stopped.
func Stop(name string, timeout time.Duration) error {
	return withService(OpStop, name, func(s *mgr.Service) error {
		return stopService(OpStop, name, mgrHandle{s}, timeout, pollInterval)
	})
}

// SetCommandLine replaces the installed service's command line (its
// ImagePath) and nothing else, in one ChangeServiceConfig call: one
// registry write, so that after a power cut the service names either the
// old or the new command line. The upgrade points the service at a
// complete copy of its binary with it while the binary's own path is
// being swapped. It returns once the change is on disk (setCommandLine).
func SetCommandLine(name, line string) error {
	p, err := windows.UTF16PtrFromString(line)
	if err != nil {
		return fmt.Errorf("%s service %q: command line %q: %w", OpConfigure, name, line, err)
	}
	return withService(OpConfigure, name, func(s *mgr.Service) error {
		return setCommandLine(name, line, scmConfigurer{s: s, imagePath: p})
	})
}

// scmConfigurer changes a service through the service manager and
// flushes its registry key.
type scmConfigurer struct {
	s         *mgr.Service
	imagePath *uint16
}

func (c scmConfigurer) setImagePath(string) error {
	return windows.ChangeServiceConfig(c.s.Handle,
		windows.SERVICE_NO_CHANGE, windows.SERVICE_NO_CHANGE, windows.SERVICE_NO_CHANGE,
		c.imagePath, nil, nil, nil, nil, nil, nil)
}

func (c scmConfigurer) flush() error { return flushServiceKey(c.s.Name) }

// procRegFlushKey is RegFlushKey, which x/sys/windows does not wrap.
var procRegFlushKey = windows.NewLazySystemDLL("advapi32.dll").NewProc("RegFlushKey")

// flushServiceKey writes the service's registry key, and with it the
// rest of the SYSTEM hive that changed, to disk. RegFlushKey asks for a
// key opened with KEY_QUERY_VALUE.
func flushServiceKey(name string) error {
	if err := procRegFlushKey.Find(); err != nil {
		return err
	}
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, servicesKey+name, registry.QUERY_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	if r, _, _ := procRegFlushKey.Call(uintptr(k)); r != 0 {
		return syscall.Errno(r)
	}
	return nil
}

func withService(op Operation, name string, f func(*mgr.Service) error) error {
	if err := validateName(name); err != nil {
		return err
	}
	m, err := mgr.Connect()
	if err != nil {
		return explain(op, name, err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return explain(op, name, err)
	}
	defer s.Close()
	return f(s)
}

// Query reports whether the service is installed, its state and start
// type. It asks only for query rights, so it works without elevation. A
// missing service is a Status with Installed false, not an error.
func Query(name string) (Status, error) {
	st := Status{Name: name}
	if err := validateName(name); err != nil {
		return st, err
	}
	scm, err := windows.OpenSCManager(nil, nil, windows.SC_MANAGER_CONNECT)
	if err != nil {
		return st, explain(OpStatus, name, err)
	}
	defer windows.CloseServiceHandle(scm)
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return st, err
	}
	h, err := windows.OpenService(scm, name16, windows.SERVICE_QUERY_STATUS|windows.SERVICE_QUERY_CONFIG)
	if isErrno(err, errnoServiceDoesNotExist) {
		return st, nil
	}
	if err != nil {
		return st, explain(OpStatus, name, err)
	}
	s := &mgr.Service{Name: name, Handle: h}
	defer s.Close()
	if st, err = (mgrHandle{s}).query(); err != nil {
		return st, explain(OpStatus, name, err)
	}
	if err := queryConfig(h, &st); err != nil {
		return st, explain(OpStatus, name, err)
	}
	st.Recovery = queryRecovery(s)
	st.Environment = queryEnvironment(name)
	return st, nil
}

// queryRecovery reads the failure actions through the service manager's
// API, or returns nil when it cannot: status still says the rest.
func queryRecovery(s *mgr.Service) *Recovery {
	actions, err := s.RecoveryActions()
	if err != nil {
		return nil
	}
	reset, err := s.ResetPeriod()
	if err != nil {
		return nil
	}
	r := &Recovery{ResetFailuresAfter: time.Duration(reset) * time.Second}
	for _, a := range actions {
		if a.Type == mgr.ServiceRestart {
			r.RestartDelays = append(r.RestartDelays, a.Delay)
		}
	}
	return r
}

// queryConfig adds the start type, command line, dependencies, delayed
// start and pre-shutdown time-out to st. It does not use
// mgr.Service.Config, which fails as a whole when the service manager does
// not know one of the extra settings it asks for (Wine's does not know
// delayed start); here delayed start and the pre-shutdown time-out are
// optional.
func queryConfig(h windows.Handle, st *Status) error {
	b, err := queryBuffer(func(p *byte, n uint32, need *uint32) error {
		return windows.QueryServiceConfig(h, (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(p)), n, need)
	})
	if err != nil {
		return err
	}
	cfg := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&b[0]))
	st.StartType = StartType(cfg.StartType)
	st.CommandLine = windows.UTF16PtrToString(cfg.BinaryPathName)
	st.Dependencies = readStringBlock(cfg.Dependencies)

	b, err = queryBuffer(func(p *byte, n uint32, need *uint32) error {
		return windows.QueryServiceConfig2(h, windows.SERVICE_CONFIG_DELAYED_AUTO_START_INFO, p, n, need)
	})
	if _, err := optionalSetting(err, ""); err != nil {
		return err
	}
	if b != nil {
		st.DelayedAutoStart = (*windows.SERVICE_DELAYED_AUTO_START_INFO)(unsafe.Pointer(&b[0])).IsDelayedAutoStartUp != 0
	}

	b, err = queryBuffer(func(p *byte, n uint32, need *uint32) error {
		return windows.QueryServiceConfig2(h, windows.SERVICE_CONFIG_PRESHUTDOWN_INFO, p, n, need)
	})
	if _, err := optionalSetting(err, ""); err != nil {
		return err
	}
	if b != nil {
		st.PreShutdownTimeout = time.Duration((*preShutdownInfo)(unsafe.Pointer(&b[0])).TimeoutMillis) * time.Millisecond
	}
	return nil
}

// readStringBlock reads a list the service manager returns as strings one
// after the other, each ending in NUL, with an empty string at the end.
func readStringBlock(p *uint16) []string {
	var list []string
	next := func(q *uint16, n int) *uint16 { return (*uint16)(unsafe.Add(unsafe.Pointer(q), 2*n)) }
	for p != nil && *p != 0 {
		n := 0
		for q := p; *q != 0; q = next(q, 1) {
			n++
		}
		list = append(list, windows.UTF16ToString(unsafe.Slice(p, n)))
		p = next(p, n+1)
	}
	return list
}

// queryBuffer calls a Windows query that fills a caller-sized buffer,
// growing the buffer as long as Windows asks for more.
func queryBuffer(call func(p *byte, n uint32, need *uint32) error) ([]byte, error) {
	n := uint32(1024)
	for {
		b := make([]byte, n)
		err := call(&b[0], n, &n)
		if err == nil {
			return b, nil
		}
		if err != windows.ERROR_INSUFFICIENT_BUFFER || n <= uint32(len(b)) {
			return nil, err
		}
	}
}

// mgrHandle is the handle startService and stopService drive.
type mgrHandle struct{ s *mgr.Service }

func (h mgrHandle) query() (Status, error) {
	q, err := h.s.Query()
	if err != nil {
		return Status{Name: h.s.Name}, err
	}
	return Status{
		Name:            h.s.Name,
		Installed:       true,
		State:           State(q.State),
		ProcessID:       q.ProcessId,
		Win32ExitCode:   q.Win32ExitCode,
		ServiceExitCode: q.ServiceSpecificExitCode,
	}, nil
}

func (h mgrHandle) start() error { return h.s.Start() }

func (h mgrHandle) control(c Control) error {
	_, err := h.s.Control(svc.Cmd(c))
	return err
}

// IsWindowsService reports whether the service manager started this
// process, in which case main should call RunAsService.
func IsWindowsService() (bool, error) {
	// x/sys asks for a parent named services.exe in session 0. Wine runs
	// its services.exe in session 1, so a parent named services.exe in
	// any session is accepted too. A look-alike parent does no harm:
	// RunAsService then fails with the "not started by the service
	// manager" error.
	if ok, err := svc.IsWindowsService(); err != nil || ok {
		return ok, err
	}
	parent, err := parentImage()
	if err != nil {
		return false, err
	}
	return isServiceManagerImage(parent), nil
}

// parentImage returns the file name of this process's parent, "" if the
// parent has exited.
func parentImage() (string, error) {
	list, err := proc.List()
	if err != nil {
		return "", fmt.Errorf("listing processes: %w", err)
	}
	parent, _ := proc.Parent(list, os.Getpid())
	return parent.Name, nil
}

// RunAsService runs the process as the service name under the service
// manager. It reports start-pending, calls run on its own goroutine and
// reports running; on Stop, Shutdown or pre-shutdown it calls stop (which
// must ask run to return, as core.Shutdown does) and waits up to StopTimeout for run to
// return. At a host shutdown (Shutdown or pre-shutdown) it first runs the
// NodeShutdown registered with SetNodeShutdown, if any, waiting up to its
// grace periods and NodeShutdownSlack. Each receive on preShutdown (nil:
// none) is handled as the service manager's pre-shutdown. It returns once
// the service manager has been told the service
// stopped, with the error run returned, or one saying run did not finish
// in time; the caller should then exit the process. When run returns or
// fails without a stop request, the service stops with a non-zero exit
// code so that the recovery actions restart it.
func RunAsService(name string, run func() error, stop func(), preShutdown <-chan struct{}) error {
	h := &handler{
		l: lifecycle{
			run: run, stop: stop,
			nodeShutdown: registeredNodeShutdown, nodeShutdownSlack: NodeShutdownSlack,
			stopTimeout: StopTimeout, progress: progressInterval,
			events: registeredEvents,
		},
		preShutdown: preShutdown,
		result:      make(chan error, 1),
	}
	if err := svc.Run(name, h); err != nil {
		return explain(OpRun, name, err)
	}
	select {
	case err := <-h.result:
		return err
	default:
		return fmt.Errorf("run service %q: the service manager ended the service before it started", name)
	}
}

// PreShutdownRequests creates the event PreShutdownEventName(pid), open to
// SYSTEM and Administrators only, and returns a channel that receives each
// time it is signalled, for RunAsService, and the function that closes the
// event. Creating a global event needs SYSTEM or an elevated prompt.
func PreShutdownRequests(pid uint32) (<-chan struct{}, func(), error) {
	// stackdump's named event: the same kernel object and descriptor, a
	// different name.
	ev, err := stackdump.Create(PreShutdownEventName(pid), acl.EventSDDL)
	if err != nil {
		return nil, func() {}, err
	}
	requests := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev.Wait() == nil {
			requests <- struct{}{}
		}
	}()
	return requests, func() {
		// Wait returns once the event is closed; a request nobody
		// takes any more must not keep the goroutine.
		go func() {
			for range requests {
			}
		}()
		ev.Close()
		<-done
		close(requests)
	}, nil
}

// handler adapts lifecycle to svc.Handler.
type handler struct {
	l           lifecycle
	preShutdown <-chan struct{}
	result      chan error
}

func (h *handler) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	serving.Store(true)
	defer serving.Store(false)
	controls := make(chan Control)
	quit := make(chan struct{})
	defer close(quit)
	go forward(requests, func(r svc.ChangeRequest) Control { return Control(r.Cmd) }, h.preShutdown, controls, quit)
	code, err := h.l.serve(controls, func(r report) { status <- toSvcStatus(r) })
	h.result <- err
	// Service-specific exit code: ExitRunFailed and ExitUnexpectedStop are
	// edgecore's codes, not Windows error numbers.
	return true, code
}

func toSvcStatus(r report) svc.Status {
	st := svc.Status{
		State:      svc.State(r.State),
		CheckPoint: r.CheckPoint,
		WaitHint:   uint32(r.WaitHint / time.Millisecond),
	}
	// svc.Accepted uses the SERVICE_ACCEPT_* bits as they are.
	st.Accepts = svc.Accepted(r.accepts())
	return st
}
