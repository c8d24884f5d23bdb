//go:build windows

package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

func TestConstantsMatchTheServiceManager(t *testing.T) {
	// State, StartType and Control are converted to and from the
	// service manager's numbers without a table.
	pairs := []struct {
		name      string
		ours, win uint32
	}{
		{"Stopped", uint32(Stopped), uint32(svc.Stopped)},
		{"StartPending", uint32(StartPending), uint32(svc.StartPending)},
		{"StopPending", uint32(StopPending), uint32(svc.StopPending)},
		{"Running", uint32(Running), uint32(svc.Running)},
		{"ContinuePending", uint32(ContinuePending), uint32(svc.ContinuePending)},
		{"PausePending", uint32(PausePending), uint32(svc.PausePending)},
		{"Paused", uint32(Paused), uint32(svc.Paused)},
		{"StartAutomatic", uint32(StartAutomatic), mgr.StartAutomatic},
		{"StartManual", uint32(StartManual), mgr.StartManual},
		{"StartDisabled", uint32(StartDisabled), mgr.StartDisabled},
		{"ControlStop", uint32(ControlStop), uint32(svc.Stop)},
		{"ControlInterrogate", uint32(ControlInterrogate), uint32(svc.Interrogate)},
		{"ControlShutdown", uint32(ControlShutdown), uint32(svc.Shutdown)},
		{"ControlPreShutdown", uint32(ControlPreShutdown), uint32(svc.PreShutdown)},
		{"acceptStop", acceptStop, uint32(svc.AcceptStop)},
		{"acceptShutdown", acceptShutdown, uint32(svc.AcceptShutdown)},
		{"acceptPreShutdown", acceptPreShutdown, uint32(svc.AcceptPreShutdown)},
		{"errnoAccessDenied", errnoAccessDenied, uint32(windows.ERROR_ACCESS_DENIED)},
		{"errnoInvalidLevel", errnoInvalidLevel, uint32(windows.ERROR_INVALID_LEVEL)},
		{"errnoServiceAlreadyRunning", errnoServiceAlreadyRunning, uint32(windows.ERROR_SERVICE_ALREADY_RUNNING)},
		{"errnoServiceDisabled", errnoServiceDisabled, uint32(windows.ERROR_SERVICE_DISABLED)},
		{"errnoServiceCannotAcceptCtl", errnoServiceCannotAcceptCtl, uint32(windows.ERROR_SERVICE_CANNOT_ACCEPT_CTRL)},
		{"errnoServiceNotActive", errnoServiceNotActive, uint32(windows.ERROR_SERVICE_NOT_ACTIVE)},
		{"errnoBrokenPipe", errnoBrokenPipe, uint32(windows.ERROR_BROKEN_PIPE)},
		{"errnoNoData", errnoNoData, uint32(windows.ERROR_NO_DATA)},
		{"errnoPipeNotConnected", errnoPipeNotConnected, uint32(windows.ERROR_PIPE_NOT_CONNECTED)},
		{"errnoServiceDoesNotExist", errnoServiceDoesNotExist, uint32(windows.ERROR_SERVICE_DOES_NOT_EXIST)},
		{"errnoServiceSpecificError", errnoServiceSpecificError, uint32(windows.ERROR_SERVICE_SPECIFIC_ERROR)},
		{"errnoServiceMarkedForDelete", errnoServiceMarkedForDelete, uint32(windows.ERROR_SERVICE_MARKED_FOR_DELETE)},
		{"errnoServiceExists", errnoServiceExists, uint32(windows.ERROR_SERVICE_EXISTS)},
		{"errnoFailedServiceConnect", errnoFailedServiceConnect, uint32(windows.ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)},
		{"errnoServiceDependencyFail", errnoServiceDependencyFail, uint32(windows.ERROR_SERVICE_DEPENDENCY_FAIL)},
		{"errnoServiceDependencyDeleted", errnoServiceDependencyDeleted, uint32(windows.ERROR_SERVICE_DEPENDENCY_DELETED)},
	}
	for _, p := range pairs {
		if p.ours != p.win {
			t.Errorf("%s = %d, Windows uses %d", p.name, p.ours, p.win)
		}
	}
}

// The test binary doubles as the service under test: started by the
// service manager as `<exe> as-test-service <mode> <name> <report file> ...`
// it runs RunAsService and writes what it saw to the report file.
const testServiceArg = "as-test-service"

type serviceReport struct {
	Args      []string
	IsService bool
	Stopped   bool // the graceful shutdown ran
	// Serving is what Serving said inside run.
	Serving bool
	// PodsStopped counts the runs of the registered node shutdown;
	// NodeUpThen is set when the node was still running at the last.
	PodsStopped int
	NodeUpThen  bool
	// Proxy is HTTPS_PROXY as the service's process has it: join --proxy's
	// environment, given by the service manager.
	Proxy string
}

func TestMain(m *testing.M) {
	if len(os.Args) > 4 && os.Args[1] == testServiceArg {
		os.Exit(runTestService(os.Args[2], os.Args[3], os.Args[4]))
	}
	os.Exit(m.Run())
}

func runTestService(mode, name, reportFile string) int {
	rep := serviceReport{Args: os.Args[1:], Proxy: os.Getenv("HTTPS_PROXY")}
	rep.IsService, _ = IsWindowsService()
	write := func() {
		b, _ := json.Marshal(rep)
		_ = os.WriteFile(reportFile, b, 0o644)
	}
	write()
	stopped := make(chan struct{})
	var mu sync.Mutex
	run := func() error {
		if mode == "fail" {
			return errors.New("test service asked to fail")
		}
		// As the kubelet's node shutdown manager does once it runs.
		SetNodeShutdown(NodeShutdown{Grace: 5 * time.Second, Run: func() error {
			mu.Lock()
			defer mu.Unlock()
			rep.PodsStopped++
			select {
			case <-stopped:
				rep.NodeUpThen = false
			default:
				rep.NodeUpThen = true
			}
			write()
			return nil
		}})
		mu.Lock()
		rep.Serving = Serving()
		write()
		mu.Unlock()
		<-stopped
		mu.Lock()
		rep.Stopped = true
		write()
		mu.Unlock()
		return nil
	}
	requests, closeRequests, err := PreShutdownRequests(uint32(os.Getpid()))
	if err != nil {
		return 2
	}
	defer closeRequests()
	if err := RunAsService(name, run, func() { close(stopped) }, requests); err != nil {
		return 1
	}
	return 0
}

// TestServiceLifecycle installs, starts, stops and removes a real service.
// It changes the machine's service database, so it runs only when asked.
func TestServiceLifecycle(t *testing.T) {
	if os.Getenv("EDGECORE_SERVICE_TEST") != "1" {
		t.Skip("installs a Windows service: set EDGECORE_SERVICE_TEST=1 in an elevated prompt (or under Wine) to run it")
	}
	exe, reportFile := copyTestBinary(t)
	name := fmt.Sprintf("edgecore-test-%d", os.Getpid())
	// A node that stops its pods for up to 30 s at a host shutdown.
	c := DefaultConfig(exe, `C:\etc\kube edge\edgecore.yaml`, 30*time.Second)
	c.Name = name
	c.StartType = StartManual
	// Arguments that need every quoting rule, to see them arrive intact.
	c.Args = []string{testServiceArg, "ok", name, reportFile, `C:\etc\kube edge\`, `say "hi"`, "", `a\\"b`}
	// A restart an hour after a failure never fires during the test.
	c.RestartDelays = []time.Duration{time.Hour}
	// A service every Windows (and Wine) has stands in for containerd.
	c.RuntimeService = "RpcSs"
	// join --proxy's environment, in the service key's Environment value.
	const proxy = "http://edge:pr0xy@proxy.example:3128"
	c.Environment = []string{"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "NO_PROXY=localhost,127.0.0.1,::1,10.244.0.0/16,10.96.0.0/12"}

	warnings, err := Install(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Uninstall(name, StopWaitTimeout) })
	for _, w := range warnings {
		t.Logf("install warning: %s", w)
		if strings.Contains(w, "RpcSs") {
			t.Errorf("install warns about the installed runtime service: %s", w)
		}
	}

	_, err = Install(c)
	if !errors.Is(err, ErrAlreadyInstalled) || !strings.Contains(err.Error(), "edgecore.exe service uninstall") {
		t.Errorf("second Install = %v, want ErrAlreadyInstalled naming the uninstall command", err)
	}

	st := query(t, name)
	if !st.Installed || st.State != Stopped || st.StartType != StartManual {
		t.Errorf("after install: %s", st)
	}
	wantLine, _ := c.CommandLine()
	if st.CommandLine != wantLine {
		t.Errorf("installed command line %s, want %s", st.CommandLine, wantLine)
	}
	if !reflect.DeepEqual(st.Environment, c.Environment) {
		t.Errorf("after install the service's environment is %q, want %q", st.Environment, c.Environment)
	}
	if deps := dependencies(t, st); !reflect.DeepEqual(deps, []string{"RpcSs"}) {
		t.Errorf("after install the service depends on %q (%s), want RpcSs", deps, st)
	}
	checkRecovery(t, name, c)

	// The rest of the lifecycle, a subtest beside the recovery actions'
	// read-back (which Wine cannot show), so that the summary counts what
	// ran.
	var started bool
	var startedProxy string // HTTPS_PROXY in the started service's process
	t.Run("command line, start, stop, pre-shutdown request and uninstall", func(t *testing.T) {
		// SetCommandLine changes the command line and nothing else, and
		// flushes the service's registry key (RegFlushKey) before it returns.
		if err := SetCommandLine(name, wantLine+" --moved"); err != nil {
			t.Fatal(err)
		}
		if st := query(t, name); st.CommandLine != wantLine+" --moved" || st.StartType != StartManual {
			t.Errorf("after SetCommandLine: %s, command line %s", st, st.CommandLine)
		}
		// An upgrade and a rollback change the command line only: join's
		// proxy environment is carried over.
		if st := query(t, name); !reflect.DeepEqual(st.Environment, c.Environment) {
			t.Errorf("after SetCommandLine the service's environment is %q, want %q", st.Environment, c.Environment)
		}
		if err := SetCommandLine(name, wantLine); err != nil {
			t.Fatal(err)
		}

		if err := Start(name, StartTimeout); err != nil {
			t.Fatal(err)
		}
		st = query(t, name)
		if st.State != Running || st.ProcessID == 0 {
			t.Errorf("after start: %s (process %d)", st, st.ProcessID)
		}
		rep := readReport(t, reportFile)
		if want := append([]string(nil), c.Args...); !reflect.DeepEqual(rep.Args, want) {
			t.Errorf("the service received %q, want %q", rep.Args, want)
		}
		if !rep.IsService {
			t.Error("IsWindowsService is false in a process the service manager started")
		}
		if !rep.Serving {
			t.Error("Serving is false in the running service: the kubelet's node shutdown manager would not start")
		}
		started, startedProxy = true, rep.Proxy
		if st.PreShutdownTimeout != c.PreShutdownTimeout || !strings.Contains(st.String(), "a host shutdown waits up to 70s") {
			t.Errorf("Query reports a pre-shutdown time-out of %v (%s), want %v", st.PreShutdownTimeout, st, c.PreShutdownTimeout)
		}

		if err := Stop(name, StopWaitTimeout); err != nil {
			t.Fatal(err)
		}
		st = query(t, name)
		if st.State != Stopped || st.Win32ExitCode != 0 {
			t.Errorf("after stop: %s (exit %d/%d)", st, st.Win32ExitCode, st.ServiceExitCode)
		}
		if rep := readReport(t, reportFile); !rep.Stopped || rep.PodsStopped != 0 {
			t.Errorf("stop ran the graceful shutdown: %v, the node shutdown %d times; want the stop only: an operator's stop leaves the pods alone",
				rep.Stopped, rep.PodsStopped)
		}

		// An administrator's rehearsal of a host shutdown: the service stops
		// the pods with the node still up, then stops, as at pre-shutdown.
		if err := Start(name, StartTimeout); err != nil {
			t.Fatal(err)
		}
		st = query(t, name)
		if err := stackdump.Signal(PreShutdownEventName(st.ProcessID)); err != nil {
			t.Fatalf("signalling %s: %v", PreShutdownEventName(st.ProcessID), err)
		}
		deadline := time.Now().Add(StopWaitTimeout)
		for st = query(t, name); st.State != Stopped && time.Now().Before(deadline); st = query(t, name) {
			time.Sleep(100 * time.Millisecond)
		}
		if st.State != Stopped || st.Win32ExitCode != 0 {
			t.Errorf("after the pre-shutdown request: %s (exit %d/%d), want a clean stop", st, st.Win32ExitCode, st.ServiceExitCode)
		}
		if rep := readReport(t, reportFile); rep.PodsStopped != 1 || !rep.NodeUpThen || !rep.Stopped {
			t.Errorf("after the pre-shutdown request the node shutdown ran %d times (node up then: %v) and the stop %v; want once, before the stop",
				rep.PodsStopped, rep.NodeUpThen, rep.Stopped)
		}

		// Uninstall of a running service stops it first, gracefully.
		if err := Start(name, StartTimeout); err != nil {
			t.Fatal(err)
		}
		if st := query(t, name); st.State != Running || readReport(t, reportFile).Stopped {
			t.Fatalf("second start: %s", st)
		}
		if err := Uninstall(name, StopWaitTimeout); err != nil {
			t.Fatal(err)
		}
		if !readReport(t, reportFile).Stopped {
			t.Error("uninstall did not stop the running service gracefully")
		}
		if st := query(t, name); st.Installed || st.String() != "not installed" {
			t.Errorf("after uninstall: %s", st)
		}
		// The environment lived in the service's key, which is gone
		// with it: reset removes join's proxy with the services.
		if env := queryEnvironment(name); env != nil {
			t.Errorf("after uninstall the service key still has an environment: %q", env)
		}
		if err := Uninstall(name, StopWaitTimeout); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("second Uninstall = %v, want ErrNotInstalled", err)
		}
		if err := Start(name, StartTimeout); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Start of a removed service = %v, want ErrNotInstalled", err)
		}
	})
	// The service manager gives the service's process the Environment
	// value: join --proxy reaches edgecore and containerd this way.
	t.Run("the started process has the service's environment", func(t *testing.T) {
		switch {
		case !started:
			t.Skip("the service did not start (see above)")
		case startedProxy == proxy:
		case isWine():
			t.Skipf("Wine's service manager starts a service without its key's Environment value (the process had HTTPS_PROXY=%q); "+
				"Windows' gives it, and the value written and kept across SetCommandLine is checked above", startedProxy)
		default:
			t.Errorf("the service's process has HTTPS_PROXY=%q, want the Environment value's %q", startedProxy, proxy)
		}
	})
}

// TestServiceFailureExitCode checks that a run that fails on its own stops
// the service with edgecore's exit code, which is what makes the recovery
// actions restart it.
func TestServiceFailureExitCode(t *testing.T) {
	if os.Getenv("EDGECORE_SERVICE_TEST") != "1" {
		t.Skip("installs a Windows service: set EDGECORE_SERVICE_TEST=1 in an elevated prompt (or under Wine) to run it")
	}
	exe, reportFile := copyTestBinary(t)
	name := fmt.Sprintf("edgecore-test-fail-%d", os.Getpid())
	c := DefaultConfig(exe, "unused", 0)
	c.Name = name
	c.StartType = StartManual
	c.Args = []string{testServiceArg, "fail", name, reportFile}
	c.RestartDelays = []time.Duration{time.Hour}
	c.RuntimeService = name + "-no-such-runtime"
	warnings, err := Install(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Uninstall(name, StopWaitTimeout) })
	if !strings.Contains(strings.Join(warnings, "\n"), fmt.Sprintf("sc.exe config %s depend= %s", name, c.RuntimeService)) {
		t.Errorf("install without the runtime service warned %q, want the warning with the sc.exe fix", warnings)
	}
	if deps := dependencies(t, query(t, name)); len(deps) != 0 {
		t.Errorf("the service depends on %q, a service that is not installed", deps)
	}

	// Start may see it running or already stopped again.
	_ = Start(name, StartTimeout)
	deadline := time.Now().Add(30 * time.Second)
	st := query(t, name)
	for st.State != Stopped && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		st = query(t, name)
	}
	if st.State != Stopped || st.Win32ExitCode != uint32(windows.ERROR_SERVICE_SPECIFIC_ERROR) || st.ServiceExitCode != ExitRunFailed {
		t.Errorf("after a failing run: %s (exit %d/%d), want stopped with service exit code %d", st, st.Win32ExitCode, st.ServiceExitCode, ExitRunFailed)
	}
	if !strings.Contains(st.String(), "last run failed") {
		t.Errorf("status %q does not say the last run failed", st)
	}
}

// copyTestBinary copies the test binary into a directory whose name has a
// space, so that the installed command line must quote it.
func copyTestBinary(t *testing.T) (exe, reportFile string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its clean-up fails the test when the file system
	// cannot delete a just-stopped executable yet (Wine), and what is
	// tested here is the service, not the clean-up.
	dir, err := os.MkdirTemp("", "edge core ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// os.RemoveAll fails under Wine 8 (it deletes through handles
		// relative to the directory); file by file works everywhere.
		for _, p := range []string{reportFile, exe, dir} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Logf("leaving %s: %v", p, err)
			}
		}
	})
	exe = filepath.Join(dir, "edgecore test.exe")
	reportFile = filepath.Join(dir, "report file.json")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(exe)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return exe, reportFile
}

func query(t *testing.T, name string) Status {
	t.Helper()
	st, err := Query(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func isWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// dependencies are the services st's service depends on, as Query reports
// them and, where Windows does so, status says. Wine's service manager
// stores them (in the registry value Windows uses too) but does not report
// them; there they are read from the registry.
func dependencies(t *testing.T, st Status) []string {
	t.Helper()
	if len(st.Dependencies) > 0 {
		if want := "; depends on " + strings.Join(st.Dependencies, ", "); !strings.HasSuffix(st.String(), want) {
			t.Errorf("status %q does not end with %q", st, want)
		}
		return st.Dependencies
	}
	if !isWine() {
		return nil
	}
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Services\`+st.Name, registry.QUERY_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	deps, _, err := k.GetStringsValue("DependOnService")
	if err == registry.ErrNotExist {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Wine does not report dependencies; its registry has %q", deps)
	return deps
}

func readReport(t *testing.T, path string) serviceReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the service wrote no report: %v", err)
	}
	var rep serviceReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func checkRecovery(t *testing.T, name string, c Config) {
	t.Helper()
	m, err := mgr.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Run("recovery actions read back", func(t *testing.T) {
		actions, err := s.RecoveryActions()
		if isWine() && isErrno(err, errnoInvalidLevel) {
			// Wine 8's services.exe accepts SERVICE_CONFIG_FAILURE_ACTIONS
			// and drops it (a FIXME in svcctl_ChangeServiceConfig2W),
			// and answers its query with ERROR_INVALID_LEVEL: there is
			// nothing stored to read back, by this call or any other.
			t.Skipf("Wine's service manager neither keeps nor reports recovery actions (QueryServiceConfig2(SERVICE_CONFIG_FAILURE_ACTIONS): %v); "+
				"Windows reports them to this same check", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(actions) != len(c.RestartDelays) {
			t.Fatalf("recovery actions %+v, want %d restarts", actions, len(c.RestartDelays))
		}
		for i, a := range actions {
			if a.Type != mgr.ServiceRestart || a.Delay != c.RestartDelays[i] {
				t.Errorf("recovery action %d = %+v, want restart after %v", i, a, c.RestartDelays[i])
			}
		}
		if p, err := s.ResetPeriod(); err != nil || p != c.ResetPeriodSeconds() {
			t.Errorf("reset period = %d, %v; want %d", p, err, c.ResetPeriodSeconds())
		}
	})
	b, err := queryBuffer(func(p *byte, n uint32, need *uint32) error {
		return windows.QueryServiceConfig2(s.Handle, windows.SERVICE_CONFIG_DESCRIPTION, p, n, need)
	})
	if err != nil {
		t.Fatal(err)
	}
	desc := windows.UTF16PtrToString((*windows.SERVICE_DESCRIPTION)(unsafe.Pointer(&b[0])).Description)
	if desc != c.Description {
		t.Errorf("description %q, want %q", desc, c.Description)
	}
	b, err = queryBuffer(func(p *byte, n uint32, need *uint32) error {
		return windows.QueryServiceConfig2(s.Handle, windows.SERVICE_CONFIG_PRESHUTDOWN_INFO, p, n, need)
	})
	// Windows and Wine both keep and report the pre-shutdown time-out.
	if err != nil {
		t.Fatalf("reading the pre-shutdown time-out: %v", err)
	}
	if got := time.Duration((*preShutdownInfo)(unsafe.Pointer(&b[0])).TimeoutMillis) * time.Millisecond; got != c.PreShutdownTimeout {
		t.Errorf("pre-shutdown time-out %v, want %v", got, c.PreShutdownTimeout)
	}
}

func TestOutsideTheServiceManager(t *testing.T) {
	if ok, err := IsWindowsService(); ok || err != nil {
		t.Errorf("IsWindowsService() = %v, %v in a test process", ok, err)
	}
	ran := false
	err := RunAsService("edgecore-not-a-service", func() error { ran = true; return nil }, func() {}, nil)
	if err == nil || !strings.Contains(err.Error(), "not started by the service manager") {
		t.Errorf("RunAsService from a console = %v, want the not-started-by-the-service-manager error", err)
	}
	if ran {
		t.Error("RunAsService ran the node outside the service manager")
	}
}

func TestReadStringBlockReadsWhatStringBlockWrites(t *testing.T) {
	for _, list := range [][]string{{"containerd"}, {"RpcSs", "containerd", "+NetworkProvider"}, {"ünïcödé", "x"}} {
		if got := readStringBlock(&stringBlock(list)[0]); !reflect.DeepEqual(got, list) {
			t.Errorf("readStringBlock(stringBlock(%q)) = %q", list, got)
		}
	}
	if got := readStringBlock(nil); got != nil {
		t.Errorf("readStringBlock(nil) = %q, want none", got)
	}
}

// The running services' processes are listed by process id; Wine's own
// services (its RPC server, Plug and Play) run in every prefix, as
// Windows' do on a host.
func TestProcessesListsRunningServices(t *testing.T) {
	got, err := Processes()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no running service listed")
	}
	for pid, name := range got {
		st, err := Query(name)
		if err != nil {
			t.Fatal(err)
		}
		if int(st.ProcessID) != pid {
			t.Errorf("Processes lists %s as process %d, Query says %d", name, pid, st.ProcessID)
		}
	}
	if _, ok := got[os.Getpid()]; ok {
		t.Errorf("this test process (%d) is listed as a service", os.Getpid())
	}
}
