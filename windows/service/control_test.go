package service

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeService plays the service manager's side of one service: each query
// returns the next scripted state (the last one repeats), and start and
// control return scripted errors.
type fakeService struct {
	states   []Status
	queries  int
	starts   int
	controls []Control
	startErr error
	ctlErrs  []error // one per control call; nil afterwards
}

func (f *fakeService) query() (Status, error) {
	i := f.queries
	if i >= len(f.states) {
		i = len(f.states) - 1
	}
	f.queries++
	st := f.states[i]
	st.Installed = true
	return st, nil
}

func (f *fakeService) start() error {
	f.starts++
	return f.startErr
}

func (f *fakeService) control(c Control) error {
	f.controls = append(f.controls, c)
	if n := len(f.controls) - 1; n < len(f.ctlErrs) {
		return f.ctlErrs[n]
	}
	return nil
}

func states(ss ...State) []Status {
	out := make([]Status, len(ss))
	for i, s := range ss {
		out[i] = Status{State: s}
	}
	return out
}

const tick = time.Millisecond

func TestStartStartsAStoppedServiceAndWaitsForRunning(t *testing.T) {
	f := &fakeService{states: states(Stopped, StartPending, StartPending, Running)}
	if err := startService("edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
	if f.starts != 1 {
		t.Errorf("started %d times, want 1", f.starts)
	}
}

func TestStartLeavesARunningServiceAlone(t *testing.T) {
	f := &fakeService{states: states(Running)}
	if err := startService("edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
	if f.starts != 0 {
		t.Errorf("started a running service %d times", f.starts)
	}
}

func TestStartWaitsForAStoppingServiceFirst(t *testing.T) {
	f := &fakeService{states: states(StopPending, StopPending, Stopped, StartPending, Running)}
	if err := startService("edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
	if f.starts != 1 {
		t.Errorf("started %d times, want once after it stopped", f.starts)
	}
}

func TestStartReportsAServiceThatStopsWhileStarting(t *testing.T) {
	f := &fakeService{states: []Status{{State: Stopped}, {State: StartPending},
		{State: Stopped, Win32ExitCode: errnoServiceSpecificError, ServiceExitCode: ExitRunFailed}}}
	err := startService("edgecore", f, time.Second, tick)
	if err == nil || !strings.Contains(err.Error(), "stopped while starting") || !strings.Contains(err.Error(), "exit code 1") {
		t.Errorf("error = %v, want one saying it stopped while starting with exit code 1", err)
	}
	if f.starts != 1 {
		t.Errorf("started %d times, want 1: no retry loop against a failing service", f.starts)
	}
}

func TestStartTimesOut(t *testing.T) {
	f := &fakeService{states: states(Stopped, StartPending)}
	err := startService("edgecore", f, 20*time.Millisecond, tick)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "running") {
		t.Errorf("error = %v, want a timeout waiting for running", err)
	}
}

func TestStartExplainsADisabledService(t *testing.T) {
	f := &fakeService{states: states(Stopped), startErr: syscall.Errno(errnoServiceDisabled)}
	err := startService("edgecore", f, time.Second, tick)
	if err == nil || !strings.Contains(err.Error(), "Set-Service edgecore -StartupType Automatic") {
		t.Errorf("error = %v, want the fix for a disabled service", err)
	}
}

func TestStopSendsStopOnceAndWaits(t *testing.T) {
	f := &fakeService{states: states(Running, StopPending, StopPending, Stopped)}
	if err := stopService(OpStop, "edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
	if len(f.controls) != 1 || f.controls[0] != ControlStop {
		t.Errorf("controls sent = %v, want one Stop", f.controls)
	}
}

func TestStopLeavesAStoppedServiceAlone(t *testing.T) {
	f := &fakeService{states: states(Stopped)}
	if err := stopService(OpUninstall, "edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
	if len(f.controls) != 0 {
		t.Errorf("sent %v to a stopped service", f.controls)
	}
}

func TestStopWaitsForAStartingServiceToTakeStop(t *testing.T) {
	// While starting, a service does not accept Stop; it is sent once the
	// service runs.
	f := &fakeService{
		states:  states(StartPending, Running, Running, StopPending, Stopped),
		ctlErrs: []error{syscall.Errno(errnoServiceCannotAcceptCtl)},
	}
	if err := stopService(OpStop, "edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
	if len(f.controls) != 2 {
		t.Errorf("controls sent = %v, want a retry after the refused Stop", f.controls)
	}
}

func TestStopToleratesAServiceThatStoppedMeanwhile(t *testing.T) {
	f := &fakeService{states: states(Running, Stopped), ctlErrs: []error{syscall.Errno(errnoServiceNotActive)}}
	if err := stopService(OpStop, "edgecore", f, time.Second, tick); err != nil {
		t.Fatal(err)
	}
}

// A process that is exiting closes its control pipe; that is no reason to
// fail an uninstall (seen under Wine right after edgecore failed to join).
func TestStopToleratesAServiceWhoseProcessIsExiting(t *testing.T) {
	for _, errno := range []uint32{errnoBrokenPipe, errnoNoData, errnoPipeNotConnected} {
		f := &fakeService{states: states(Running, Stopped), ctlErrs: []error{syscall.Errno(errno)}}
		if err := stopService(OpUninstall, "edgecore", f, time.Second, tick); err != nil {
			t.Errorf("errno %d: %v", errno, err)
		}
	}
}

func TestStopTimesOutNamingTheProcess(t *testing.T) {
	f := &fakeService{states: []Status{{State: Running, ProcessID: 312}, {State: StopPending, ProcessID: 312}}}
	err := stopService(OpUninstall, "edgecore", f, 20*time.Millisecond, tick)
	if !errors.Is(err, ErrTimeout) || !strings.HasPrefix(err.Error(), "uninstall service") || !strings.Contains(err.Error(), "taskkill /F /PID 312") {
		t.Errorf("error = %v, want an uninstall timeout naming taskkill for PID 312", err)
	}
}

func TestStopExplainsAccessDenied(t *testing.T) {
	f := &fakeService{states: states(Running), ctlErrs: []error{syscall.Errno(errnoAccessDenied)}}
	err := stopService(OpStop, "edgecore", f, time.Second, tick)
	if !errors.Is(err, ErrAccessDenied) {
		t.Errorf("error = %v, want ErrAccessDenied", err)
	}
}

func TestServiceManagerImage(t *testing.T) {
	for image, want := range map[string]bool{
		"services.exe":                     true,
		"SERVICES.EXE":                     true,
		`C:\Windows\System32\services.exe`: true,
		"explorer.exe":                     false,
		"powershell.exe":                   false,
		"myservices.exe":                   false,
		"services.exe.bak":                 false,
		"":                                 false,
	} {
		if got := isServiceManagerImage(image); got != want {
			t.Errorf("isServiceManagerImage(%q) = %v, want %v", image, got, want)
		}
	}
}
