package servicectl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/crashlog"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/protect/protecttest"
	"github.com/kubeedge-windows/edgecore/internal/reconnect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

// host records what the commands did, in order.
type host struct {
	calls       []string
	status      service.Status
	installErr  error
	restrictErr error
	uninstErr   error
	signal      func(event string) error
	// panicLogsErr and listErr stand in for a log directory the caller
	// may not read.
	panicLogsErr error
	listErr      error
	// sddl holds the paths that exist, with their owner and DACL.
	sddl map[string]string
	// made is the descriptor each directory install created was given.
	made map[string]string
	// installed is the service install created.
	installed service.Config
}

// exists is the host's files: the executable in Program Files, which
// Users may read and run, and C:\etc\kubeedge as join left it.
func (h *host) exists() map[string]string {
	if h.sddl == nil {
		ti := "O:S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464D:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
		h.sddl = map[string]string{
			`C:\Program Files`: ti, `C:\Program Files\edgecore`: ti, `C:\Program Files\edgecore\edgecore.exe`: ti,
			`C:\etc`: "O:BAD:AI(A;ID;FA;;;BA)", `C:\etc\kubeedge`: "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)",
			`C:\var`: "O:BAD:AI(A;ID;FA;;;BA)", `C:\var\log`: "O:BAD:AI(A;ID;FA;;;BA)",
		}
	}
	return h.sddl
}

// targets are what protect.Targets lists for a default node.
var targets = []protect.Target{
	{What: "the configuration", Path: `C:\etc\kubeedge`, Restrict: true},
	{What: "edgecore's logs", Path: logDir, Restrict: true},
	{What: "the directory of the edgecore.exe the service runs", Path: `C:\Program Files\edgecore`},
	{What: "the edgecore.exe the service runs", Path: `C:\Program Files\edgecore\edgecore.exe`},
}

func (h *host) system() System {
	return System{
		Query: func(name string) (service.Status, error) {
			h.calls = append(h.calls, "query "+name)
			st := h.status
			st.Name = name
			return st, nil
		},
		Install: func(c service.Config) ([]string, error) {
			h.calls = append(h.calls, "install "+c.Name)
			h.installed = c
			return []string{"containerd is not installed"}, h.installErr
		},
		Uninstall: func(name string) error {
			h.calls = append(h.calls, "uninstall "+name)
			return h.uninstErr
		},
		Protect: protect.Host{
			Mkdir: func(dir, sddl string) error {
				h.calls = append(h.calls, "mkdir "+dir)
				if h.made == nil {
					h.made = map[string]string{}
				}
				h.made[dir] = sddl
				// As Windows reads back what the fake does not keep: Users read.
				h.exists()[dir] = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
				return nil
			},
			Read: func(path string) (acl.Security, error) {
				s, ok := h.exists()[path]
				if !ok {
					return acl.Security{}, fs.ErrNotExist
				}
				return acl.ParseSDDL(s)
			},
			List: protecttest.List(h.exists),
			Restrict: func(dir string, _ func(string) bool) error {
				h.calls = append(h.calls, "restrict "+dir)
				return h.restrictErr
			},
			Exists: func(path string) (bool, error) {
				_, ok := h.exists()[path]
				return ok, nil
			},
		},
		Signal: func(event string) error {
			h.calls = append(h.calls, "signal "+event)
			if h.signal != nil {
				return h.signal(event)
			}
			return nil
		},
		PanicLogs: func(logFile string) ([]crashlog.File, error) {
			if h.panicLogsErr != nil {
				return nil, h.panicLogsErr
			}
			return crashlog.PanicLogs(logFile)
		},
		StackDumps: func(dir string, pid uint32) (map[string]bool, error) {
			if h.listErr != nil {
				return nil, h.listErr
			}
			return crashlog.StackDumps(dir, pid)
		},
	}
}

const logDir = `C:\var\log\kubeedge`

func serviceConfig() service.Config {
	return service.DefaultConfig(`C:\Program Files\edgecore\edgecore.exe`, `C:\etc\kubeedge\config\edgecore.yaml`, 0)
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestInstallRestrictsTheNodeDirectories(t *testing.T) {
	h := &host{}
	warnings, repairs, err := Install(serviceConfig(), logDir, targets, h.system())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"install edgecore", "mkdir " + logDir, "restrict C:\\etc\\kubeedge", "restrict " + logDir}; !reflect.DeepEqual(h.calls, want) {
		t.Errorf("did %q, want %q", h.calls, want)
	}
	if len(warnings) != 1 {
		t.Errorf("install's warnings were not passed on: %q", warnings)
	}
	if len(repairs) != 2 || !strings.Contains(repairs[1].String(), `BUILTIN\Users may read`) {
		t.Errorf("repairs = %v, want both directories, the log's with what it was", repairs)
	}
}

func TestInstallRefusesAnExecutableUsersMayChange(t *testing.T) {
	h := &host{}
	h.exists()[`C:\Program Files\edgecore\edgecore.exe`] = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;0x1301bf;;;BU)"
	_, _, err := Install(serviceConfig(), logDir, targets, h.system())
	mustContain(t, "error", fmt.Sprint(err), `C:\Program Files\edgecore\edgecore.exe (the edgecore.exe the service runs) is writable by others: BUILTIN\Users may change or delete`,
		"copy edgecore.exe into a directory only administrators may change")
	if len(h.calls) != 0 {
		t.Errorf("did %q before refusing", h.calls)
	}
	// A user's Downloads: owned by the user.
	h = &host{}
	h.exists()[`C:\Program Files\edgecore`] = "O:S-1-5-21-1-2-3-1001D:(A;OICI;FA;;;S-1-5-21-1-2-3-1001)"
	_, _, err = Install(serviceConfig(), logDir, targets, h.system())
	mustContain(t, "error", fmt.Sprint(err), `is owned by S-1-5-21-1-2-3-1001`)
	if len(h.calls) != 0 {
		t.Errorf("did %q before refusing", h.calls)
	}
}

func TestInstallFailingLeavesTheLogDirectoryAlone(t *testing.T) {
	h := &host{installErr: service.ErrAccessDenied}
	if _, _, err := Install(serviceConfig(), logDir, targets, h.system()); !errors.Is(err, service.ErrAccessDenied) {
		t.Errorf("Install = %v, want the service manager's error", err)
	}
	if want := []string{"install edgecore"}; !reflect.DeepEqual(h.calls, want) {
		t.Errorf("did %q, want only the install", h.calls)
	}
}

func TestInstallRemovesTheServiceWhenTheDirectoryCannotBeRestricted(t *testing.T) {
	h := &host{restrictErr: errors.New("the file system does not support ACLs")}
	_, _, err := Install(serviceConfig(), logDir, targets, h.system())
	if want := []string{"install edgecore", "mkdir " + logDir, "restrict C:\\etc\\kubeedge", "uninstall edgecore"}; !reflect.DeepEqual(h.calls, want) {
		t.Errorf("did %q, want %q", h.calls, want)
	}
	if !errors.Is(err, h.restrictErr) {
		t.Fatalf("Install = %v, want the ACL error", err)
	}
	mustContain(t, "error", err.Error(), logDir, "the service was removed again", "NTFS", "`edgecore.exe service install` again")

	h = &host{restrictErr: errors.New("denied"), uninstErr: errors.New("marked for deletion")}
	_, _, err = Install(serviceConfig(), logDir, targets, h.system())
	mustContain(t, "error", fmt.Sprint(err), "removing the service again also failed (marked for deletion)", "`edgecore.exe service uninstall`")
}

func TestStatusNamesTheNonEmptyPanicLogs(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "edgecore.log")
	h := &host{status: service.Status{Installed: true, State: service.Running, StartType: service.StartAutomatic, ProcessID: 4242}}
	out, err := Status("edgecore", logFile, h.system())
	if err != nil {
		t.Fatal(err)
	}
	if out != "edgecore: installed, running (process 4242); start type automatic\n" {
		t.Errorf("status without panic logs:\n%s", out)
	}
	panicLog := crashlog.PanicLogPath(logFile)
	if err := os.WriteFile(panicLog, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(panicLog+".old", []byte("panic: runtime error: index out of range\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = Status("edgecore", logFile, h.system())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("status with one non-empty panic log:\n%s", out)
	}
	mustContain(t, "status", lines[1], "panic log "+panicLog+".old (41 bytes, written ", "crashed", "read it")
}

func running(pid uint32) service.Status {
	return service.Status{Installed: true, State: service.Running, ProcessID: pid, CommandLine: `"C:\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`}
}

func TestDumpSignalsTheServiceProcessAndWaitsForTheFile(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "edgecore.log")
	// An earlier dump of the same process is not the answer.
	if err := os.WriteFile(filepath.Join(dir, crashlog.StackDumpName(4242, time.Now().Add(-time.Minute))), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &host{status: running(4242)}
	wrote := make(chan string, 1)
	h.signal = func(event string) error {
		// The service writes the dump a moment later, as edgecore does.
		go func() {
			time.Sleep(50 * time.Millisecond)
			p, err := crashlog.WriteStackDump(dir, 4242, time.Now())
			if err != nil {
				t.Error(err)
			}
			wrote <- p
		}()
		return nil
	}
	path, err := Dump(context.Background(), "edgecore", logFile, 5*time.Second, h.system())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"query edgecore", `signal Global\stackdump-4242`}; !reflect.DeepEqual(h.calls, want) {
		t.Errorf("did %q, want %q", h.calls, want)
	}
	if wrote := <-wrote; path != wrote {
		t.Errorf("Dump = %s, want the new dump %s", path, wrote)
	}
}

func TestDumpNeedsARunningService(t *testing.T) {
	for _, tc := range []struct {
		status service.Status
		want   []string
	}{
		{service.Status{}, []string{"not installed", "`edgecore.exe service install`"}},
		{service.Status{Installed: true, State: service.Stopped}, []string{"it is stopped, not running", "`edgecore.exe service start`", "`edgecore.exe service status`"}},
		{service.Status{Installed: true, State: service.StartPending}, []string{"it is starting, not running"}},
	} {
		h := &host{status: tc.status}
		_, err := Dump(context.Background(), "edgecore", filepath.Join(t.TempDir(), "edgecore.log"), time.Second, h.system())
		mustContain(t, "error", fmt.Sprint(err), tc.want...)
		if len(h.calls) != 1 {
			t.Errorf("%s: did %q, want only the query", tc.status, h.calls)
		}
	}
}

func TestDumpExplainsWhyTheEventCannotBeSignalled(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{fmt.Errorf("opening event x: %w", stackdump.ErrAccessDenied),
			[]string{"only SYSTEM and Administrators may ask process 4242", `"Run as administrator"`}},
		{fmt.Errorf("opening event x: %w", stackdump.ErrNoEvent),
			[]string{"process 4242 does not take stack dump requests", "still starting", "older edgecore.exe", `"C:\edgecore.exe" --config`}},
	} {
		h := &host{status: running(4242), signal: func(string) error { return tc.err }}
		_, err := Dump(context.Background(), "edgecore", filepath.Join(t.TempDir(), "edgecore.log"), time.Second, h.system())
		if !errors.Is(err, tc.err) {
			t.Errorf("Dump = %v, want it to carry %v", err, tc.err)
		}
		mustContain(t, "error", fmt.Sprint(err), tc.want...)
	}
}

func TestDumpGivesUpNamingTheLogFile(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "edgecore.log")
	h := &host{status: running(4242)}
	began := time.Now()
	_, err := Dump(context.Background(), "edgecore", logFile, 200*time.Millisecond, h.system())
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("gave up after %v with a 200ms bound", took)
	}
	mustContain(t, "error", fmt.Sprint(err), "no stack dump of it appeared in "+dir+" within 200ms", logFile)
}

func TestStatusWithoutElevationSaysHowToSeeThePanicLog(t *testing.T) {
	h := &host{
		status:       service.Status{Installed: true, State: service.Running, StartType: service.StartAutomatic, ProcessID: 7},
		panicLogsErr: fmt.Errorf("panic log x: %w", fs.ErrPermission),
	}
	dir := t.TempDir()
	out, err := Status("edgecore", filepath.Join(dir, "edgecore.log"), h.system())
	if err != nil {
		t.Fatalf("Status = %v; the service's state is still worth printing", err)
	}
	mustContain(t, "status", out, "edgecore: installed, running (process 7)",
		"panic log: "+dir+" is open to Administrators only", "`edgecore.exe service status`", `"Run as administrator"`)
}

func TestDumpWithoutElevationSaysToElevate(t *testing.T) {
	dir := t.TempDir()
	h := &host{status: running(4242), listErr: fmt.Errorf("listing stack dumps in %s: %w", dir, fs.ErrPermission)}
	_, err := Dump(context.Background(), "edgecore", filepath.Join(dir, "edgecore.log"), time.Second, h.system())
	mustContain(t, "error", fmt.Sprint(err), "goes to "+dir+", which only SYSTEM and Administrators may read", "`edgecore.exe service dump`", `"Run as administrator"`)
	if len(h.calls) != 1 {
		t.Errorf("did %q; nothing is signalled when the dump could not be found afterwards", h.calls)
	}
}

// exeTargets are protect.Targets' executable rows for exe, with the
// node's directories as join leaves them.
func exeTargets(exe string) []protect.Target {
	dir := exe[:strings.LastIndexByte(exe, '\\')]
	return append(append([]protect.Target{}, targets[:2]...),
		protect.Target{What: "the directory of the edgecore.exe the service runs", Path: dir},
		protect.Target{What: "the edgecore.exe the service runs", Path: exe})
}

// A parent of the executable's directory that others may rename lets
// them move the directory away and put their own edgecore.exe at the
// service's path, though the directory and the file themselves admit
// administrators only.
func TestInstallRefusesAnExecutableUnderADirectoryOthersMayRename(t *testing.T) {
	const adminsOnly = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	for name, tc := range map[string]struct {
		parents map[string]string
		exe     string
		want    string // "" when install goes ahead
	}{
		"made in C:\\ on a client Windows: Authenticated Users modify": {
			parents: map[string]string{`C:\Tools`: "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;ID;0x1301bf;;;AU)"},
			exe:     `C:\Tools\edgecore\edgecore.exe`,
			want:    `C:\Tools (the directory of the edgecore.exe the service runs) is a parent that others may rename or empty: Authenticated Users has 0x1301bf`,
		},
		"a grandparent where Users may delete any entry": {
			parents: map[string]string{`C:\Tools`: "O:BAD:AI(A;;0x40;;;BU)(A;;FA;;;BA)", `C:\Tools\bin`: adminsOnly},
			exe:     `C:\Tools\bin\edgecore\edgecore.exe`,
			want:    `C:\Tools (the directory of the edgecore.exe the service runs) is a parent that others may rename or empty: BUILTIN\Users has 0x40`,
		},
		"a share everyone may rewrite the ACL of": {
			parents: map[string]string{`D:\Shared`: "O:BAD:(A;;WD;;;WD)(A;;FA;;;BA)"},
			exe:     `D:\Shared\edgecore\edgecore.exe`,
			want:    `D:\Shared (the directory of the edgecore.exe the service runs) is a parent that others may rename or empty: Everyone has WD`,
		},
		// Under Wine the DACL comes from the Unix mode: the build output
		// the Wine tests install from (mode 0755 all the way up) passes.
		"Wine: the build output, mode 0755": {
			parents: map[string]string{
				`Z:\work`:         "O:S-1-22-1-0D:(A;OICI;FA;;;SY)(A;OICI;0x1f01ff;;;S-1-22-1-0)(A;OICI;0x1200a9;;;WD)",
				`Z:\work\_output`: "O:S-1-22-1-0D:(A;OICI;FA;;;SY)(A;OICI;0x1f01ff;;;S-1-22-1-0)(A;OICI;0x1200a9;;;WD)",
			},
			exe: `Z:\work\_output\windows-amd64\edgecore.exe`,
		},
		// ...and one under /tmp (mode 1777; Wine ignores the sticky bit)
		// is refused, as the same ACL would be on Windows.
		"Wine: under /tmp, mode 1777": {
			parents: map[string]string{`Z:\tmp`: "O:S-1-22-1-0D:(A;OICI;FA;;;SY)(A;OICI;0x1f01ff;;;S-1-22-1-0)(A;OICI;0x1301ff;;;WD)"},
			exe:     `Z:\tmp\edgecore\edgecore.exe`,
			want:    `Z:\tmp (the directory of the edgecore.exe the service runs) is a parent that others may rename or empty: Everyone has 0x1301ff`,
		},
		"C:\\Program Files\\edgecore": {exe: `C:\Program Files\edgecore\edgecore.exe`},
	} {
		t.Run(name, func(t *testing.T) {
			h := &host{}
			wine := "O:S-1-22-1-0D:(A;OICI;FA;;;SY)(A;OICI;0x1f01ff;;;S-1-22-1-0)(A;OICI;0x1200a9;;;WD)"
			dir := tc.exe[:strings.LastIndexByte(tc.exe, '\\')]
			if strings.HasPrefix(tc.exe, `Z:`) {
				h.exists()[dir], h.exists()[tc.exe] = wine, wine
			} else if _, ok := h.exists()[dir]; !ok {
				h.exists()[dir], h.exists()[tc.exe] = adminsOnly, adminsOnly
			}
			for p, s := range tc.parents {
				h.exists()[p] = s
			}
			_, _, err := Install(serviceConfig(), logDir, exeTargets(tc.exe), h.system())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Install = %v", err)
				}
				return
			}
			mustContain(t, "error", fmt.Sprint(err), tc.want,
				`copy edgecore.exe into a directory only administrators may change, such as C:\Program Files\edgecore or C:\etc\kubeedge\bin`,
				"the service runs that file as SYSTEM at every start")
			if len(h.calls) != 0 {
				t.Errorf("did %q before refusing", h.calls)
			}
		})
	}
}

// `service install` takes the node's folders over as join does: every
// entry below them is judged before the service is installed, and a
// link, a hard link or what another account owns is refused, named.
func TestInstallRefusesPlantedEntriesBelowTheNodesFolders(t *testing.T) {
	for _, planted := range []string{`C:\etc\kubeedge\config\upgrade.yaml`, `C:\etc\kubeedge\backup\v2099.1.1\edgecore.exe`} {
		h := &host{}
		h.exists()[planted] = "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)"
		_, _, err := Install(serviceConfig(), logDir, targets, h.system())
		mustContain(t, "error", fmt.Sprint(err), "is owned by S-1-5-21-1-2-3-1001", "(in C:\\etc\\kubeedge, the configuration)")
		if len(h.calls) != 0 {
			t.Errorf("%s: did %q before refusing", planted, h.calls)
		}
	}
}

// join's proxy shows in status as the service manager holds it, without
// the proxy's password.
func TestStatusShowsTheProxyEnvironmentWithoutItsPassword(t *testing.T) {
	h := &host{status: service.Status{Installed: true, State: service.Running, StartType: service.StartAutomatic, ProcessID: 7,
		Environment: []string{"HTTP_PROXY=http://edge:pr0xy@proxy.example:3128", "HTTPS_PROXY=http://edge:pr0xy@proxy.example:3128",
			"NO_PROXY=localhost,127.0.0.1,::1,10.244.2.0/24", "OTHER=x"}}}
	out, err := Status("edgecore", filepath.Join(t.TempDir(), "edgecore.log"), h.system())
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "status", out, "environment: HTTPS_PROXY=http://***@proxy.example:3128 HTTP_PROXY=http://***@proxy.example:3128 NO_PROXY=localhost,127.0.0.1,::1,10.244.2.0/24\n")
	if strings.Contains(out, "pr0xy") || strings.Contains(out, "OTHER") {
		t.Errorf("status shows the password or another variable:\n%s", out)
	}
}

// A running service says whether it is connected to cloudcore and, when
// it waits, why; a status another process wrote is not shown.
func TestStatusSaysWhyTheNodeIsNotConnected(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "edgecore.log")
	since := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	write := func(s reconnect.Status) {
		if err := os.WriteFile(reconnect.StatusPath("linux", logFile), s.Encode(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := &host{status: service.Status{Installed: true, State: service.Running, StartType: service.StartAutomatic, ProcessID: 4242}}
	sys := h.system()
	sys.GOOS, sys.ReadFile, sys.Now = "linux", os.ReadFile, func() time.Time { return since.Add(90 * time.Second) }

	write(reconnect.Status{PID: 4242, Since: since, Waiting: "waiting for the node's certificates: cloudcore's certificate port does not answer: dial tcp 10.0.0.1:10002: connection refused"})
	out, err := Status("edgecore", logFile, sys)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "status", out, "cloud: not connected to cloudcore since 2026-11-27T08:00:00Z (1m30s ago): waiting for the node's certificates", "connection refused")

	write(reconnect.Status{PID: 4242, Connected: true, Since: since})
	out, _ = Status("edgecore", logFile, sys)
	mustContain(t, "status", out, "cloud: connected to cloudcore since 2026-11-27T08:00:00Z")

	write(reconnect.Status{PID: 99, Since: since, Waiting: "of an earlier run"})
	if out, _ = Status("edgecore", logFile, sys); strings.Contains(out, "cloud:") {
		t.Errorf("a status of another process is shown:\n%s", out)
	}
	sys.ReadFile = func(string) ([]byte, error) { return nil, fs.ErrPermission }
	out, _ = Status("edgecore", logFile, sys)
	mustContain(t, "status", out, "cloud: "+dir+" is open to Administrators only", `"Run as administrator"`)
}
