package service

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStatusInWords(t *testing.T) {
	for _, tc := range []struct {
		st   Status
		want string
	}{
		{Status{Name: "edgecore"}, "not installed"},
		{Status{Installed: true, State: Running, StartType: StartAutomatic, ProcessID: 4242},
			"installed, running (process 4242); start type automatic"},
		{Status{Installed: true, State: Stopped, StartType: StartAutomatic},
			"installed, stopped; start type automatic"},
		{Status{Installed: true, State: Stopped, StartType: StartManual, Win32ExitCode: errnoServiceSpecificError, ServiceExitCode: ExitRunFailed},
			"installed, stopped (last run failed with exit code 1; see the log file); start type manual"},
		{Status{Installed: true, State: Stopped, StartType: StartAutomatic, Win32ExitCode: errnoServiceSpecificError, ServiceExitCode: ExitUnexpectedStop},
			"installed, stopped (last run stopped by itself with exit code 2; see the log file); start type automatic"},
		{Status{Installed: true, State: Stopped, StartType: StartAutomatic, Win32ExitCode: 1067},
			"installed, stopped (last stop: Windows error 1067); start type automatic"},
		{Status{Installed: true, State: StartPending, StartType: StartAutomatic, DelayedAutoStart: true},
			"installed, starting; start type automatic (delayed)"},
		{Status{Installed: true, State: StopPending, StartType: StartDisabled},
			"installed, stopping; start type disabled"},
		{Status{Installed: true, State: 42, StartType: StartAutomatic},
			"installed, in unknown state 42; start type automatic"},
		{Status{Installed: true, State: Running, StartType: StartAutomatic, ProcessID: 7, Dependencies: []string{"containerd"}},
			"installed, running (process 7); start type automatic; depends on containerd"},
		{Status{Installed: true, State: Running, StartType: StartAutomatic, ProcessID: 7,
			Recovery: &Recovery{RestartDelays: DefaultConfig(`C:\edgecore.exe`, `C:\etc\kubeedge\config\edgecore.yaml`, 0).RestartDelays, ResetFailuresAfter: 24 * time.Hour}},
			"installed, running (process 7); start type automatic; recovery: restart at once, then after 5s, then 30s, then 60s; failure count reset after 24h"},
		{Status{Installed: true, State: Running, StartType: StartAutomatic, ProcessID: 7, Dependencies: []string{"containerd"}, PreShutdownTimeout: 70 * time.Second},
			"installed, running (process 7); start type automatic; depends on containerd; a host shutdown waits up to 70s for it"},
		{Status{Installed: true, State: Stopped, StartType: StartManual, Recovery: &Recovery{}},
			"installed, stopped; start type manual; no recovery action: a crash leaves the service stopped (edgecore.exe service install sets restarts)"},
		{Status{Installed: true, State: Running, StartType: StartAutomatic, Recovery: &Recovery{RestartDelays: []time.Duration{90 * time.Second, 5 * time.Minute, 1500 * time.Millisecond}, ResetFailuresAfter: time.Hour}},
			"installed, running; start type automatic; recovery: restart after 90s, then 5m, then 1.5s; failure count reset after 1h"},
	} {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.st, got, tc.want)
		}
	}
}

func TestStateValuesAreWindows(t *testing.T) {
	for st, want := range map[State]uint32{Stopped: 1, StartPending: 2, StopPending: 3, Running: 4, ContinuePending: 5, PausePending: 6, Paused: 7} {
		if uint32(st) != want {
			t.Errorf("%v = %d, want %d", st, uint32(st), want)
		}
	}
}

func TestExplainNamesTheFix(t *testing.T) {
	for _, tc := range []struct {
		op        Operation
		errno     syscall.Errno
		is        error
		wantInErr string
	}{
		{OpInstall, 1073, ErrAlreadyInstalled, "edgecore.exe service uninstall"},
		{OpInstall, 5, ErrAccessDenied, "run `edgecore.exe service install` from a PowerShell or command prompt started with \"Run as administrator\""},
		{OpStart, 1060, ErrNotInstalled, "edgecore.exe service install"},
		{OpUninstall, 1072, nil, "marked for deletion"},
		{OpStart, 1058, nil, "Set-Service edgecore -StartupType Automatic"},
		{OpStop, 1061, nil, "wait a few seconds"},
		{OpRun, 1063, nil, "not started by the service manager"},
		{OpStart, 1068, nil, "`Start-Service containerd`"},
		{OpStart, 1075, nil, "`sc.exe config edgecore depend= /`"},
	} {
		err := explain(tc.op, "edgecore", tc.errno)
		if !strings.Contains(err.Error(), tc.wantInErr) || !strings.Contains(err.Error(), `"edgecore"`) {
			t.Errorf("explain(%s, %d) = %q, want it to name the service and contain %q", tc.op, tc.errno, err, tc.wantInErr)
		}
		if !strings.HasPrefix(err.Error(), string(tc.op)+" service") {
			t.Errorf("explain(%s, %d) = %q, want it to start with the operation", tc.op, tc.errno, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("explain(%s, %d) is not %v", tc.op, tc.errno, tc.is)
		}
	}
	// An error it has no words for keeps the original in the chain.
	orig := syscall.Errno(87)
	err := explain(OpStart, "edgecore", orig)
	if !errors.Is(err, orig) {
		t.Errorf("explain lost the original error: %v", err)
	}
	if explain(OpStart, "edgecore", nil) != nil {
		t.Error("explain(nil) is not nil")
	}
}

func TestTimeoutNamesTheProcessToEnd(t *testing.T) {
	err := timedOut(OpStop, "edgecore", Stopped, Status{State: StopPending, ProcessID: 77}, 45*time.Second)
	for _, want := range []string{"45s", "stopping", "taskkill /F /PID 77"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not contain %q", err, want)
		}
	}
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("%v is not ErrTimeout", err)
	}
}

func TestOptionalSettingIsSkippedOnlyWhenUnknown(t *testing.T) {
	if w, err := optionalSetting(nil, "warn"); w != "" || err != nil {
		t.Errorf("success gave %q, %v", w, err)
	}
	if w, err := optionalSetting(syscall.Errno(errnoInvalidLevel), "warn"); w != "warn" || err != nil {
		t.Errorf("an unknown setting gave %q, %v; want the warning and no error", w, err)
	}
	denied := syscall.Errno(errnoAccessDenied)
	if w, err := optionalSetting(denied, "warn"); w != "" || !errors.Is(err, denied) {
		t.Errorf("access denied gave %q, %v; want the error", w, err)
	}
}
