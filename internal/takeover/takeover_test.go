package takeover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/protect/protecttest"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// What upstream's keadm v1.23 leaves on a Windows host (see the package
// comment for where each is read).
const (
	keadmExe    = `C:\usr\local\bin\edgecore.exe`
	keadmConfig = `C:\etc\kubeedge\config\edgecore.yaml`
	keadmLine   = `C:\usr\local\bin\edgecore.exe --config C:\etc\kubeedge\config\edgecore.yaml --log-file C:\var\log\kubeedge\edgecore.log`
	self        = `C:\Program Files\edgecore\edgecore.exe`
	serverKey   = `C:\etc\kubeedge\certs\server.key`
	serverCert  = `C:\etc\kubeedge\certs\server.crt`
	newToken    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjJ9.bmV3LXNlY3JldA"
	newSecret   = "bmV3LXNlY3JldA"
)

// The ACLs keadm's folders and files get. keadm makes its folders with
// os.MkdirAll as an administrator, so they inherit C:\'s ACL; on Windows
// Server that is (icacls C:\): SYSTEM and Administrators full control,
// Users read and execute (OI)(CI), Users append data/add subdirectory
// (CI), Users write data/add file (CI)(IO), CREATOR OWNER full control
// (OI)(CI)(IO). A folder an administrator creates below it owns
// Administrators (the creator, for an elevated administrator), the
// CREATOR OWNER entry as full control for that owner, and every other
// entry inherited; the two Users entries for containers apply to the
// folder itself, so every user may add files and folders to it, as
// Windows Server lets users add files to any folder an administrator made
// under C:\. A file gets only the object-inherited entries.
const (
	keadmFolder = "O:BAG:SYD:AI(A;ID;FA;;;BA)(A;OICIIOID;GA;;;CO)(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)(A;CIID;LC;;;BU)(A;CIID;DC;;;BU)"
	keadmFile   = "O:BAG:SYD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;ID;0x1200a9;;;BU)"
	userSID     = "S-1-5-21-1-2-3-1001"
)

var host = config.Host{GOOS: config.Windows, Hostname: "WIN-EDGE-1", SystemDrive: "C:", ProgramFiles: `C:\Program Files`}

// keadmNodeConfig is the configuration of a node keadm joined, as
// upstream's code writes it (test/keadmnode, `make keadm-fixture`).
func keadmNodeConfig(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../test/keadmnode/testdata/node.yaml")
	if err != nil {
		t.Fatalf("%v: run make keadm-fixture", err)
	}
	return string(raw)
}

// world is a host keadm joined, recording every change made to it.
type world struct {
	// Services is nil: a takeover never installs or deletes a service,
	// so Install and Uninstall, left to it, panic and fail the test.
	deps.Services
	files map[string]string
	// dirs are folders, empty or not; links are entries that are links.
	dirs     map[string]bool
	links    map[string]bool
	st       service.Status
	calls    []string
	elevated bool
	// sddl overrides a path's ACL (default: keadm's, keadmFolder or
	// keadmFile).
	sddl    map[string]string
	stamp   version.Stamp
	stamped []string
	adopted *upgrade.Adoption
	result  upgrade.Result
}

func newWorld(t *testing.T) *world {
	w := &world{elevated: true, sddl: map[string]string{}, dirs: map[string]bool{}, links: map[string]bool{},
		files: map[string]string{
			keadmExe:                           "upstream edgecore",
			keadmConfig:                        keadmNodeConfig(t),
			`C:\etc\kubeedge\ca\rootCA.crt`:    "ca",
			serverCert:                         "cert",
			serverKey:                          "key",
			`C:\var\lib\kubeedge\edgecore.db`:  "db",
			self:                               "this build",
			`C:\var\log\kubeedge\edgecore.log`: "keadm's edgecore logs here",
			// keadm v1.22's NSSM service wrote these; a node joined again
			// with v1.23 keeps them.
			`C:\var\log\kubeedge\out.log`: "", `C:\var\log\kubeedge\err.log`: "",
			// keadm's default tarball path is C:\etc\kubeedge\: the
			// release tarball and its checksum stay.
			`C:\etc\kubeedge\kubeedge-v1.23.1-windows-amd64.tar.gz`:              "release",
			`C:\etc\kubeedge\checksum_kubeedge-v1.23.1-windows-amd64.tar.gz.txt`: "sha512",
			// What the kubelet keeps in its root and writes as pod logs.
			`C:\var\lib\kubelet\pods\0b5c\volumes\kubernetes.io~secret\token\ca.crt`:    "secret",
			`C:\var\lib\kubelet\plugins_registry\csi.sock`:                              "",
			`C:\var\lib\kubelet\cpu_manager_state`:                                      "{}",
			`C:\var\lib\kubelet\device-plugins\kubelet.sock`:                            "",
			`C:\var\log\pods\default_kept_0b5c0b5c-0000-4000-8000-000000000001\c\0.log`: "log",
		},
		st:     service.Status{Name: "edgecore", Installed: true, State: service.Running, ProcessID: 4242, StartType: service.StartAutomatic, CommandLine: keadmLine},
		stamp:  version.Stamp{Program: version.ProgramUpstream, Version: "v1.23.1", From: version.FromLdflags, KubeEdge: "v1.23.1"},
		result: upgrade.Result{Status: upgrade.StatusSuccess, Action: upgrade.KindUpgrade, From: FromLabel, To: "v0.2.0"},
	}
	for _, d := range []string{`C:\etc\kubeedge\manifests`, `C:\var\lib\kubelet\plugins`} {
		w.dirs[d] = true
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

func k(p string) string { return ospath.Key(config.Windows, p) }

func (w *world) isFile(p string) bool {
	for f := range w.files {
		if k(f) == k(p) {
			return true
		}
	}
	return false
}

func (w *world) exists(p string) bool {
	if w.isFile(p) {
		return true
	}
	for _, m := range []map[string]bool{w.dirs, w.links} {
		for d := range m {
			if k(d) == k(p) || ospath.Within(config.Windows, p, d) {
				return true
			}
		}
	}
	for f := range w.files {
		if ospath.Within(config.Windows, p, f) {
			return true
		}
	}
	return false
}

// entry is an fs.DirEntry of the fake.
type entry struct {
	name string
	mode fs.FileMode
}

func (e entry) Name() string               { return e.name }
func (e entry) IsDir() bool                { return e.mode.IsDir() }
func (e entry) Type() fs.FileMode          { return e.mode.Type() }
func (e entry) Info() (fs.FileInfo, error) { return nil, errors.New("not in the fake") }

// readDir lists dir as os.ReadDir does: links as links, never followed.
func (w *world) readDir(dir string) ([]fs.DirEntry, error) {
	if !w.exists(dir) || w.isFile(dir) {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
	}
	seen := map[string]fs.FileMode{}
	add := func(p string, leaf fs.FileMode) {
		if !ospath.Within(config.Windows, dir, p) || k(p) == k(dir) {
			return
		}
		// The first name below dir.
		child := p
		for k(ospath.Dir(config.Windows, child)) != k(dir) {
			child = ospath.Dir(config.Windows, child)
		}
		name := child[len(ospath.Dir(config.Windows, child)):]
		name = strings.TrimLeft(name, `\`)
		mode := fs.ModeDir
		if k(child) == k(p) {
			mode = leaf
		}
		if _, ok := seen[name]; !ok || mode == fs.ModeSymlink {
			seen[name] = mode
		}
	}
	for f := range w.files {
		add(f, 0)
	}
	for d := range w.dirs {
		add(d, fs.ModeDir)
	}
	for l := range w.links {
		add(l, fs.ModeSymlink)
	}
	var out []fs.DirEntry
	for n, m := range seen {
		out = append(out, entry{n, m})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name() < out[b].Name() })
	return out, nil
}

func (w *world) system() System {
	return System{
		Services: w,
		ReadFile: func(p string) ([]byte, error) {
			for f, s := range w.files {
				if k(f) == k(p) {
					return []byte(s), nil
				}
			}
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		},
		Exists:   func(p string) (bool, error) { return w.exists(p), nil },
		ReadDir:  w.readDir,
		Elevated: func() (bool, error) { return w.elevated, nil },
		Protect: protect.Host{
			Read: func(p string) (acl.Security, error) {
				if !w.exists(p) && !strings.EqualFold(p, `C:\`) && len(p) > 3 {
					return acl.Security{}, &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
				}
				if s, ok := w.sddl[p]; ok {
					return acl.ParseSDDL(s)
				}
				if w.isFile(p) {
					return acl.ParseSDDL(keadmFile)
				}
				return acl.ParseSDDL(keadmFolder)
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
		Stamp: func(exe string) (version.Stamp, error) {
			w.stamped = append(w.stamped, exe)
			return w.stamp, nil
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

func (w *world) run(t *testing.T, dry bool, token string) (string, error) {
	t.Helper()
	o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
	o.Executable, o.DryRun, o.Timeout, o.Token = self, dry, time.Minute, token
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

// A dry run reads the binary's version from the file and changes and runs
// nothing: the System has no way to run a program, and no call is made.
func TestDryRunChangesNothing(t *testing.T) {
	w := newWorld(t)
	out, err := w.run(t, true, "")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(w.calls) != 0 || w.adopted != nil {
		t.Errorf("the dry run changed the host: %v", w.calls)
	}
	if strings.Join(w.stamped, ",") != keadmExe {
		t.Errorf("the binary's version was read from %v, want %s only", w.stamped, keadmExe)
	}
	wantIn(t, out, "Dry run", "the service runs "+keadmExe+", upstream's KubeEdge edgecore v1.23.1 (read from the file: -ldflags)", "node win-edge-1", serverKey, `C:\var\lib\kubeedge\edgecore.db`,
		"modules.edged.windowsService from true to false", ourLine, "(was "+keadmLine+")", "put "+self+" in place of "+keadmExe,
		`restrict C:\usr\local\bin`[len("restrict "):])
	if strings.Contains(out, "modules.edgeHub.token from") || strings.Contains(out, "podSandboxImage") {
		t.Errorf("the dry run changes more than windowsService of keadm's configuration:\n%s", out)
	}
}

// The default host keadm v1.23 leaves, with the ACLs Windows Server gives
// its folders (every user may add files to them), is taken over: keadm's
// folder of the binary is restricted with the node's, after the entries
// in them were found to be keadm's.
func TestTakeoverRunsEveryStep(t *testing.T) {
	w := newWorld(t)
	out, err := w.run(t, false, "")
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
		`restrict C:\var\lib\kubelet`, `restrict C:\usr\local\bin`, "set command line "+ourLine)
	a := w.adopted
	if a.Installed.Executable != keadmExe || a.Installed.ConfigFile != keadmConfig || a.Installed.DataSource != `C:\var\lib\kubeedge\edgecore.db` ||
		a.Binary != self || a.FromLabel != FromLabel || a.Timeout != time.Minute || len(a.Retire) != 0 {
		t.Errorf("adoption %+v", a)
	}
	cfg := string(a.Config)
	if !strings.Contains(cfg, "windowsService: false") || !strings.Contains(cfg, "hostnameOverride: win-edge-1") || !strings.Contains(cfg, "podSandboxImage: kubeedge/pause:3.6") {
		t.Errorf("the configuration written:\n%s", cfg)
	}
	wantIn(t, out, "upstream's KubeEdge edgecore v1.23.1 (read from the file: -ldflags)", "Node win-edge-1 runs this build", "edgecore.exe rollback",
		"treat the key and the Secrets cached in the database as known", "takeover --token")
	lastLine(t, out, "result=success action=takeover from=keadm to=v0.2.0")
}

// takeover --token: the node applies for a new certificate with the new
// token; the old certificate and key are handed to the journal to be
// moved aside, removed once the node is Ready, put back if it is not.
func TestTakeoverRotatesTheCertificate(t *testing.T) {
	w := newWorld(t)
	out, err := w.run(t, true, newToken)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantIn(t, out, "modules.edgeHub.token from \"\" to 0123456789ab…<redacted>", "move "+serverCert+" and "+serverKey+" aside")
	if strings.Contains(out, newSecret) {
		t.Errorf("the dry run prints the token:\n%s", out)
	}
	out, err = w.run(t, false, newToken)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a := w.adopted
	if strings.Join(a.Retire, ",") != serverCert+","+serverKey || !strings.Contains(string(a.Config), "token: "+newToken) {
		t.Errorf("retire %v, configuration:\n%s", a.Retire, a.Config)
	}
	if strings.Contains(out, "treat the key") {
		t.Errorf("the rotated node is told to rotate:\n%s", out)
	}
	o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
	o.Executable, o.Token = self, "not-a-token-"+newSecret
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--token") || strings.Contains(err.Error(), newSecret) {
		t.Errorf("a malformed token: %v", err)
	}
}

func TestTakeoverPutsTheServiceBackWhenTheNodeIsNotReady(t *testing.T) {
	w := newWorld(t)
	w.result = upgrade.Result{Status: upgrade.StatusRolledBack, Action: upgrade.KindUpgrade, From: FromLabel, To: "v0.2.0",
		Reason: "v0.2.0 was not healthy within 1m0s: the node did not report Ready"}
	out, err := w.run(t, false, "")
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

// refuse runs a takeover of w, which must be refused before anything is
// changed, with every part of want in the error or its fix.
func refuse(t *testing.T, w *world, change func(*world), want ...string) {
	t.Helper()
	for _, dry := range []bool{true, false} {
		w := newWorld(t)
		change(w)
		o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
		o.Executable, o.DryRun = self, dry
		var out bytes.Buffer
		err := Run(context.Background(), &out, *o, w.system())
		if err == nil {
			t.Fatalf("takeover went ahead (dry run %v):\n%s", dry, out.String())
		}
		msg := err.Error() + " " + steps.Fix(err)
		for _, s := range want {
			if !strings.Contains(msg, s) {
				t.Errorf("error %q lacks %q", msg, s)
			}
		}
		before := newWorld(t)
		change(before)
		if len(w.calls) != 0 || w.adopted != nil || w.st.CommandLine != before.st.CommandLine {
			t.Errorf("changed the host before refusing: %v, adopted %+v, command line %s", w.calls, w.adopted, w.st.CommandLine)
		}
	}
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
		{"no certificates", func(w *world) { delete(w.files, serverCert) }, []string{`server.crt missing`, "never finished its join"}},
		{"a setting this build refuses", func(w *world) {
			w.files[keadmConfig] = strings.Replace(w.files[keadmConfig], "cgroupsPerQOS: false", "cgroupsPerQOS: true", 1)
		}, []string{"cgroupsPerQOS", "keadm's edgecore keeps running meanwhile"}},
		{"a binary folder another account owns", func(w *world) {
			w.sddl[`C:\usr\local\bin`] = "O:" + userSID + "D:AI(A;OICIID;FA;;;" + userSID + ")(A;ID;FA;;;SY)"
		}, []string{`C:\usr\local\bin`, "owned by"}},
		{"already taken over", func(w *world) {
			w.stamp = version.Stamp{Program: version.ProgramThis, Version: "v0.2.0", From: version.FromResource}
		}, []string{"already runs edgecore for Windows v0.2.0", "upgrade"}},
	} {
		t.Run(tc.name, func(t *testing.T) { refuse(t, newWorld(t), tc.change, tc.want...) })
	}
	// A service binary that is not an edgecore is refused, read and never
	// run.
	refuseWith(t, func(w *world) System {
		sys := w.system()
		sys.Stamp = func(exe string) (version.Stamp, error) {
			return version.Stamp{}, errors.New(exe + " is not a Go program this command can read")
		}
		return sys
	}, func(*world) {}, "is not upstream's edgecore", "not a Go program", "sc.exe qc edgecore")
	// Not elevated: refused at its own step, before any change.
	w := newWorld(t)
	w.elevated = false
	out, err := w.run(t, false, "")
	if err == nil || !strings.Contains(err.Error()+steps.Fix(err), "Run as administrator") || len(w.calls) != 0 {
		t.Errorf("not elevated: %v, calls %v\n%s", err, w.calls, out)
	}
}

// refuseWith is refuse with the System sys makes of the world.
func refuseWith(t *testing.T, sys func(*world) System, change func(*world), want ...string) {
	t.Helper()
	w := newWorld(t)
	change(w)
	o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
	o.Executable = self
	err := Run(context.Background(), &bytes.Buffer{}, *o, sys(w))
	if err == nil {
		t.Fatal("takeover went ahead")
	}
	msg := err.Error() + " " + steps.Fix(err)
	for _, s := range want {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
	if len(w.calls) != 0 || w.adopted != nil {
		t.Errorf("changed the host before refusing: %v", w.calls)
	}
}

// Nothing planted in the node's folders is taken over: each entry keadm
// and upstream's edgecore do not leave is named, with what the node would
// have done with it, before anything changes, in a dry run too.
func TestPlantedEntriesAreRefused(t *testing.T) {
	// path is planted; named is the entry the refusal names: the
	// outermost one keadm does not leave.
	for _, tc := range []struct {
		name, path, named, why string
		link                   bool
	}{
		{"an upgrade journal", `C:\etc\kubeedge\upgrade\journal.json`, `C:\etc\kubeedge\upgrade`, "the upgrade journal and staged binaries", false},
		{"a backup dated 2099", `C:\etc\kubeedge\backup\v9.9.9\backup.json`, `C:\etc\kubeedge\backup`, "backups, which `edgecore.exe rollback` puts back", false},
		{"image archives", `C:\etc\kubeedge\images\pause.tar`, `C:\etc\kubeedge\images`, "image archives, which the node imports", false},
		{"a static pod", `C:\etc\kubeedge\manifests\pod.yaml`, "", "a static pod manifest", false},
		{"upgrade settings", `C:\etc\kubeedge\config\upgrade.yaml`, "", "the upgrade settings, which name where the binaries", false},
		{"an SQLite hot journal", `C:\var\lib\kubeedge\edgecore.db-journal`, "", "an SQLite journal of the database", false},
		{"an SQLite write-ahead log", `C:\var\lib\kubeedge\edgecore.db-wal`, "", "an SQLite journal of the database", false},
		{"a flexvolume driver", `C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec\vendor~drv\drv.exe`,
			`C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec\vendor~drv`, "a flexvolume driver, which the kubelet runs as SYSTEM", false},
		{"a DLL beside the binary", `C:\usr\local\bin\version.dll`, "", "a file beside the edgecore.exe the service runs, where Windows looks first for the DLLs", false},
		{"keadm's bootstrap token file", `C:\etc\kubeedge\bootstrap-edgecore.conf`, "", "keadm's bootstrap token file", false},
		{"something unexpected in the kubelet's root", `C:\var\lib\kubelet\volumeplugins\x\x.exe`, `C:\var\lib\kubelet\volumeplugins`, "not something keadm or upstream's edgecore writes there", false},
		{"a file in the log folder", `C:\var\log\kubeedge\run.ps1`, "", "not something keadm or upstream's edgecore writes there", false},
		{"a kubelet folder made a link", `C:\var\lib\kubelet\pods`, "", "a link or another special entry", true},
		{"a file in the pod logs folder", `C:\var\log\pods\x.log`, "", "not something keadm", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			named := tc.named
			if named == "" {
				named = tc.path
			}
			refuse(t, newWorld(t), func(w *world) {
				if tc.link {
					w.links[tc.path] = true
					for f := range w.files {
						if ospath.Within(config.Windows, tc.path, f) {
							delete(w.files, f)
						}
					}
					return
				}
				w.files[tc.path] = "planted"
			}, named+": "+tc.why, "Get-Acl", "move it out of the node's folders")
		})
	}
}
