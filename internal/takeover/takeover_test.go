package takeover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/protect/protecttest"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// What upstream's keadm v1.23 leaves on a Windows host (see the package
// comment for where each is read).
const (
	keadmExe    = `C:\usr\local\bin\edgecore.exe`
	keadmConfig = `C:\etc\kubeedge\config\edgecore.yaml`
	keadmLine   = `C:\usr\local\bin\edgecore.exe --config C:\etc\kubeedge\config\edgecore.yaml --log-file C:\var\log\kubeedge\edgecore.log`
	self        = `C:\Users\admin\Downloads\edgecore-v0.2.0\edgecore.exe`
	secret      = "eyJhbGciOiJIUzI1NiJ9.the-signed-part"
)

var host = config.Host{GOOS: config.Windows, Hostname: "WIN-EDGE-1", SystemDrive: "C:", ProgramFiles: `C:\Program Files`}

// world is a host keadm joined, recording every change made to it.
type world struct {
	// Services is nil: a takeover never installs or deletes a service,
	// so Install and Uninstall, left to it, panic and fail the test.
	deps.Services
	files    map[string]string
	st       service.Status
	calls    []string
	elevated bool
	// sddl overrides a path's ACL (default: as an administrator made it
	// under C:\ on Windows Server, readable by users).
	sddl    map[string]string
	adopted *upgrade.Adoption
	result  upgrade.Result
}

func keadmYAML(t *testing.T) string {
	t.Helper()
	text, err := config.Render(config.KindDefault, host)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i := strings.Index(s, "    hostnameOverride: ")
	s = s[:i] + "    windowsService: true\n" + s[i:]
	return strings.Replace(s, "    token: \"\"\n", "    token: 0123456789abcdef."+secret+"\n", 1)
}

func newWorld(t *testing.T) *world {
	w := &world{elevated: true, sddl: map[string]string{},
		files: map[string]string{
			keadmExe:                           "upstream edgecore",
			keadmConfig:                        keadmYAML(t),
			`C:\etc\kubeedge\ca\rootCA.crt`:    "ca",
			`C:\etc\kubeedge\certs\server.crt`: "cert",
			`C:\etc\kubeedge\certs\server.key`: "key",
			`C:\var\lib\kubeedge\edgecore.db`:  "db",
			self:                               "this build",
			`C:\var\log\kubeedge\edgecore.log`: "keadm's edgecore logs here",
		},
		st:     service.Status{Name: "edgecore", Installed: true, State: service.Running, ProcessID: 4242, StartType: service.StartAutomatic, CommandLine: keadmLine},
		result: upgrade.Result{Status: upgrade.StatusSuccess, Action: upgrade.KindUpgrade, From: FromLabel, To: "v0.2.0"},
	}
	return w
}

func (w *world) record(format string, args ...any) {
	w.calls = append(w.calls, fmt.Sprintf(format, args...))
}

func (w *world) Query(name string) (service.Status, error) {
	if name != w.st.Name {
		return service.Status{Name: name}, nil
	}
	return w.st, nil
}
func (w *world) Start(name string) error {
	w.record("start %s", name)
	w.st.State = service.Running
	return nil
}
func (w *world) Stop(name string) error {
	w.record("stop %s", name)
	w.st.State = service.Stopped
	return nil
}

// Installed is what Query says, as deps.WindowsServices has it.
func (w *world) Installed(name string) (bool, error) {
	st, err := w.Query(name)
	return st.Installed, err
}

func (w *world) SetCommandLine(name, line string) error {
	w.record("set command line %s", line)
	w.st.CommandLine = line
	return nil
}

func (w *world) exists(p string) bool {
	for f := range w.files {
		if strings.EqualFold(f, p) || strings.HasPrefix(strings.ToLower(f), strings.ToLower(p)+`\`) {
			return true
		}
	}
	return false
}

func (w *world) system() System {
	return System{
		Services: w,
		ReadFile: func(p string) ([]byte, error) {
			if s, ok := w.files[p]; ok {
				return []byte(s), nil
			}
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		},
		Exists:   func(p string) (bool, error) { return w.exists(p), nil },
		Elevated: func() (bool, error) { return w.elevated, nil },
		Protect: protect.Host{
			Read: func(p string) (acl.Security, error) {
				if !w.exists(p) && !strings.EqualFold(p, `C:\`) && len(p) > 3 {
					return acl.Security{}, &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
				}
				if s, ok := w.sddl[p]; ok {
					return acl.ParseSDDL(s)
				}
				return acl.ParseSDDL("O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)")
			},
			List: protecttest.List(func() map[string]string {
				// Each file with its owner and DACL, as Read gives them.
				m := map[string]string{}
				for f := range w.files {
					m[f] = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
					if s, ok := w.sddl[f]; ok {
						m[f] = s
					}
				}
				return m
			}),
			Restrict: func(root string, _ func(string) bool) error { w.record("restrict %s", root); return nil },
			Exists:   func(p string) (bool, error) { return w.exists(p), nil },
		},
		VersionOf: func(exe string) (string, error) {
			return "", errors.New(`unexpected version output "KubeEdge v1.23.1"`)
		},
		Adopt: func(_ context.Context, out io.Writer, a upgrade.Adoption) (upgrade.Result, error) {
			w.record("adopt %s", a.Installed.Executable)
			w.adopted = &a
			if w.result.Status != upgrade.StatusSuccess {
				// The journal has put keadm's files back and started
				// keadm's edgecore, with the command line then set.
				w.st.State = service.Running
			}
			return w.result, nil
		},
		Version: "v0.2.0",
	}
}

func (w *world) run(t *testing.T, dry bool) (string, error) {
	t.Helper()
	o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
	o.Executable, o.DryRun, o.Timeout = self, dry, time.Minute
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Run(context.Background(), &out, *o, w.system())
	return out.String(), err
}

const ourLine = `"C:\usr\local\bin\edgecore.exe" --config C:\etc\kubeedge\config\edgecore.yaml`

// lastLine checks the result line automation reads: last, unindented.
func lastLine(t *testing.T, out, prefix string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, prefix) {
		t.Errorf("last line %q, want it to start with %q", last, prefix)
	}
}

func wantIn(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Errorf("output lacks %q:\n%s", p, out)
		}
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	w := newWorld(t)
	out, err := w.run(t, true)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(w.calls) != 0 || w.adopted != nil {
		t.Errorf("the dry run changed the host: %v", w.calls)
	}
	wantIn(t, out, "Dry run", "node win-edge-1", `C:\etc\kubeedge\certs\server.key`, `C:\var\lib\kubeedge\edgecore.db`,
		"modules.edged.windowsService from true to false", `modules.edgeHub.token from 0123456789ab…<redacted> to ""`,
		ourLine, "(was "+keadmLine+")", "put "+self+" in place of "+keadmExe)
	if strings.Contains(out, secret) {
		t.Errorf("the dry run prints the token's secret:\n%s", out)
	}
}

func TestTakeoverRunsEveryStep(t *testing.T) {
	w := newWorld(t)
	out, err := w.run(t, false)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Folders restricted first, then the command line, then the swap.
	var order []string
	for _, c := range w.calls {
		order = append(order, strings.Fields(c)[0])
	}
	if got := strings.Join(order, " "); !strings.HasPrefix(got, "restrict") || !strings.HasSuffix(got, "restrict set adopt") {
		t.Errorf("calls %v", w.calls)
	}
	wantIn(t, strings.Join(w.calls, "\n"), `restrict C:\etc\kubeedge`, `restrict C:\var\lib\kubeedge`, `restrict C:\var\log\kubeedge`,
		"set command line "+ourLine)
	a := w.adopted
	if a.Installed.Executable != keadmExe || a.Installed.ConfigFile != keadmConfig || a.Installed.DataSource != `C:\var\lib\kubeedge\edgecore.db` ||
		a.Binary != self || a.FromLabel != FromLabel || a.Timeout != time.Minute {
		t.Errorf("adoption %+v", a)
	}
	cfg := string(a.Config)
	if !strings.Contains(cfg, "windowsService: false") || strings.Contains(cfg, secret) || !strings.Contains(cfg, "hostnameOverride: win-edge-1") {
		t.Errorf("the configuration written:\n%s", cfg)
	}
	wantIn(t, out, "Node win-edge-1 runs this build", "edgecore.exe rollback")
	lastLine(t, out, "result=success action=takeover from=keadm to=v0.2.0")
}

func TestTakeoverPutsTheServiceBackWhenTheNodeIsNotReady(t *testing.T) {
	w := newWorld(t)
	w.result = upgrade.Result{Status: upgrade.StatusRolledBack, Action: upgrade.KindUpgrade, From: FromLabel, To: "v0.2.0",
		Reason: "v0.2.0 was not healthy within 1m0s: the node did not report Ready"}
	out, err := w.run(t, false)
	var failed *ResultError
	if !errors.As(err, &failed) || failed.Result.ExitCode() != 2 {
		t.Fatalf("err = %v, want a rolled-back result\n%s", err, out)
	}
	calls := strings.Join(w.calls, "\n")
	// The journal put the files back; the undo puts keadm's command line
	// back and restarts keadm's edgecore on it.
	if !strings.HasSuffix(calls, "set command line "+keadmLine+"\nstop edgecore\nstart edgecore") {
		t.Errorf("calls:\n%s", calls)
	}
	if w.st.CommandLine != keadmLine || w.st.State != service.Running {
		t.Errorf("service left as %+v", w.st)
	}
	lastLine(t, out, "result=rolled-back action=takeover from=keadm to=v0.2.0 reason=")
	wantIn(t, out, "did not report Ready", "the service \"edgecore\" runs "+keadmLine+" again")
}

func TestTakeoverRefusesBeforeChangingAnything(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(w *world)
		want   []string
	}{
		{"no service", func(w *world) { w.st = service.Status{Name: "edgecore"} }, []string{`no service "edgecore"`, "join"}},
		{"NSSM service of keadm v1.22", func(w *world) {
			w.st.CommandLine = `"C:\Program Files\nssm\nssm.exe"`
		}, []string{"NSSM", "v1.23"}},
		{"no certificates", func(w *world) { delete(w.files, `C:\etc\kubeedge\certs\server.crt`) }, []string{`server.crt missing`, "never finished its join"}},
		{"a setting this build refuses", func(w *world) {
			w.files[keadmConfig] = strings.Replace(w.files[keadmConfig], "    hostnameOverride: ", "    podSandboxImage: kubeedge/pause:3.6\n    hostnameOverride: ", 1)
		}, []string{"podSandboxImage", "keadm's edgecore keeps running meanwhile"}},
		{"not elevated", func(w *world) { w.elevated = false }, []string{"Run as administrator"}},
		{"a binary folder users may change", func(w *world) {
			w.sddl[`C:\usr\local\bin`] = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1301bf;;;BU)"
		}, []string{`C:\usr\local\bin`}},
		{"already taken over", func(w *world) {
			w.files[keadmConfig] = strings.Replace(strings.Replace(w.files[keadmConfig], "windowsService: true", "windowsService: false", 1), "0123456789abcdef."+secret, `""`, 1)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.change(w)
			sys := w.system()
			if tc.name == "already taken over" {
				sys.VersionOf = func(string) (string, error) { return "v0.2.0", nil }
				tc.want = []string{"already runs this build"}
			}
			o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
			o.Executable = self
			var out bytes.Buffer
			err := Run(context.Background(), &out, *o, sys)
			if err == nil {
				t.Fatalf("takeover went ahead:\n%s", out.String())
			}
			msg := err.Error() + " " + steps.Fix(err)
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			before := newWorld(t)
			tc.change(before)
			if len(w.calls) != 0 || w.adopted != nil || w.st.CommandLine != before.st.CommandLine {
				t.Errorf("changed the host before refusing: %v, adopted %+v, command line %s", w.calls, w.adopted, w.st.CommandLine)
			}
		})
	}
}
