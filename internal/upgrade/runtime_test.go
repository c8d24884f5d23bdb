package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const criPipe = "npipe://./pipe/containerd-containerd"

// rtOld is the runtime an earlier release's join installed (the bundle
// before containerd's 2.3 line); rtNew is the one this release bundles, as
// the Makefile pins it, so that the upgrade tests carry a node to the
// runtime the release zip ships.
var (
	rtOld = map[string]string{"containerd": "v2.1.4", "hcsshim": "v0.13.0", "cni-plugins": "v1.10.0"}
	rtNew = bundledRuntime()
)

// bundledRuntime is the Makefile's CONTAINERD_VERSION, HCSSHIM_VERSION and
// CNI_PLUGINS_VERSION, as build/package.sh writes them into the zip's
// runtime\manifest.json: from the environment make gives the Wine tests,
// else from the Makefile (go test runs in the package's folder).
func bundledRuntime() map[string]string {
	keys := map[string]string{"containerd": "CONTAINERD_VERSION", "hcsshim": "HCSSHIM_VERSION", "cni-plugins": "CNI_PLUGINS_VERSION"}
	v := map[string]string{}
	for name, key := range keys {
		if e := os.Getenv(key); e != "" {
			v[name] = e
		}
	}
	if len(v) == len(keys) {
		return v
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		panic(fmt.Sprintf("the runtime's versions: set %v or run in the package's folder: %v", keys, err))
	}
	for _, line := range strings.Split(string(data), "\n") {
		for name, key := range keys {
			if f := strings.Fields(line); len(f) == 3 && f[0] == key && f[1] == ":=" {
				v[name] = f[2]
			}
		}
	}
	if len(v) != len(keys) {
		panic(fmt.Sprintf("the Makefile names the runtime's versions %v", v))
	}
	return v
}

// rtLine is a runtime's versions as the upgrade's output lists them.
func rtLine(v map[string]string) string {
	return fmt.Sprintf("cni-plugins %s, containerd %s, hcsshim %s", v["cni-plugins"], v["containerd"], v["hcsshim"])
}

// The runtime's programs in the fake are told apart by their content.
const (
	pkgSame  = "same"
	pkgNew   = "new"
	pkgNoCRI = "new containerd that never answers CRI"
)

func rtContent(f runtimeinstall.File, pkg string) string {
	switch pkg {
	case pkgSame:
		return f.Name + " v1"
	case pkgNoCRI:
		if f.Name == "containerd.exe" {
			return f.Name + " v2 without CRI"
		}
	}
	return f.Name + " v2"
}

// rtProgram is how a containerd.exe behaves when its service runs it.
type rtProgram struct {
	version string
	answers bool
}

// fakeRuntime is containerd's service: it runs the containerd.exe in
// place, and answers CRI while it runs one that does.
type fakeRuntime struct {
	ops      *ops
	fs       *fakeFS
	name     string
	exe      string
	st       service.Status
	nextPID  uint32
	programs map[string]rtProgram
	running  rtProgram
	starts   int
	stops    int
}

func (r *fakeRuntime) start() error {
	r.ops.do("start containerd")
	if r.st.State == service.Running {
		return nil
	}
	content, ok := r.fs.get(r.exe)
	p, known := r.programs[content]
	if !ok || !known {
		r.st = service.Status{Name: r.name, Installed: true, State: service.Stopped, Win32ExitCode: 2}
		return fmt.Errorf("start service %q: The system cannot find the file specified", r.name)
	}
	r.nextPID++
	r.st = service.Status{Name: r.name, Installed: true, State: service.Running, ProcessID: r.nextPID}
	r.fs.containerd = map[string]bool{key(r.exe): true}
	r.running = p
	r.starts++
	return nil
}

func (r *fakeRuntime) stop() error {
	r.ops.do("stop containerd")
	if r.st.State == service.Running {
		r.stops++
	}
	r.st = service.Status{Name: r.name, Installed: true, State: service.Stopped}
	// The containers' shims keep running: only containerd's process
	// ends.
	r.fs.containerd = map[string]bool{}
	return nil
}

func (r *fakeRuntime) cri(_ context.Context, endpoint string) (hostprobe.CRIStatus, error) {
	if endpoint != criPipe || r.st.State != service.Running || !r.running.answers {
		return hostprobe.CRIStatus{}, errors.New(`open \\.\pipe\containerd-containerd: The system cannot find the file specified.`)
	}
	return hostprobe.CRIStatus{RuntimeName: "containerd", RuntimeVersion: r.running.version, RuntimeAPIVersion: "v1"}, nil
}

// withRuntime installs containerd v2.1.4 on the host, recorded as join's
// when byJoin, running, and returns the staged v0.2.0 package carrying
// the runtime pkg.
func (h *host) withRuntime(byJoin bool, pkg string) *Staged {
	l := h.layout
	rt := &fakeRuntime{ops: h.ops, fs: h.fs, name: runtimeinstall.ServiceName, exe: runtimeinstall.Files[0].Target(l), nextPID: 300,
		programs: map[string]rtProgram{
			"containerd.exe v1":             {version: "v2.1.4", answers: true},
			"containerd.exe v2":             {version: rtNew["containerd"], answers: true},
			"containerd.exe v2 without CRI": {version: rtNew["containerd"]},
		}}
	h.svc.rt = rt
	rec := runtimeinstall.Record{Service: runtimeinstall.ServiceName, Versions: rtOld}
	for _, f := range runtimeinstall.Files {
		h.fs.put(f.Target(l), []byte(rtContent(f, pkgSame)))
		rec.Files = append(rec.Files, f.Target(l))
	}
	h.fs.put(l.ContainerdConfigFile, []byte("version = 3"))
	rec.Files = append(rec.Files, l.ContainerdConfigFile)
	if byJoin {
		data, _ := rec.Encode()
		h.fs.put(runtimeinstall.RecordFile(l), data)
	}
	rt.start()
	// A running container's shim holds its program.
	h.fs.shims[key(runtimeinstall.Files[2].Target(l))] = true

	st := &Staged{Manifest: release.Manifest{Version: "v0.2.0"}, Binary: h.staged, SHA256: sum(h.stagedContent())}
	sr := &StagedRuntime{Sums: map[string]string{}, Versions: rtNew}
	if pkg == pkgSame {
		sr.Versions = rtOld
	} else {
		sr.Dir = ospath.Join(ospath.Windows, h.paths.Staging("v0.2.0"), "runtime")
	}
	for _, f := range runtimeinstall.Files {
		c := rtContent(f, pkg)
		sr.Sums[f.PackagePath()] = sum(c)
		if sr.Dir != "" {
			h.fs.put(sr.file(ospath.Windows, f), []byte(c))
		}
	}
	st.Runtime = sr
	return st
}

// plannedRuntimeUpgrade is the journal the upgrade command writes for
// v0.2.0 with the staged package st, and what it says of the runtime.
func (h *host) plannedRuntimeUpgrade(t *testing.T, e Env, st *Staged) (*Journal, string) {
	t.Helper()
	j := h.plannedUpgrade(e)
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db, Version: "v0.1.0"}
	rs, note, err := planRuntime(e, h.facts(), in, st)
	if err != nil {
		t.Fatalf("planRuntime: %v", err)
	}
	j.Runtime = rs
	return j, note
}

// wantRuntime checks every runtime program is the one of pkg.
func (h *host) wantRuntime(t *testing.T, pkg string) {
	t.Helper()
	for _, f := range runtimeinstall.Files {
		h.must(t, f.Target(h.layout), rtContent(f, pkg))
	}
}

func (h *host) recordVersions(t *testing.T) map[string]string {
	t.Helper()
	rec, ok, err := runtimeinstall.ReadRecord(runtimeHost(h.env(1, "v0.1.0")), h.layout)
	if err != nil || !ok {
		t.Fatalf("join's record: %v %v", ok, err)
	}
	return rec.Versions
}

func TestUpgradeWithTheSameRuntimeLeavesContainerdRunning(t *testing.T) {
	h := newHost(newBin)
	st := h.withRuntime(true, pkgSame)
	e := h.env(driverPID, "v0.1.0")
	j, note := h.plannedRuntimeUpgrade(t, e, st)
	if j.Runtime != nil {
		t.Fatalf("a package with the installed runtime plans a runtime swap: %+v", j.Runtime)
	}
	if !strings.Contains(note, "containerd is not restarted, running containers are not touched") {
		t.Errorf("note %q", note)
	}
	pid := h.svc.rt.st.ProcessID
	r, out := h.run(t, j)
	if r.Status != StatusSuccess {
		t.Fatalf("%+v\n%s", r, out)
	}
	if h.svc.rt.stops != 0 || h.svc.rt.st.ProcessID != pid {
		t.Errorf("containerd was restarted (%d stops, process %d then %d)", h.svc.rt.stops, pid, h.svc.rt.st.ProcessID)
	}
	h.wantRuntime(t, pkgSame)
	if strings.Contains(out, "containerd") {
		t.Errorf("the upgrade's steps name containerd:\n%s", out)
	}
	if loaded := h.journal(t); loaded.Format != journalFormatNoRuntime {
		t.Errorf("journal format %d, want %d: every release can carry out an upgrade that leaves the runtime alone", loaded.Format, journalFormatNoRuntime)
	}
}

func TestUpgradeLeavesTheOperatorsRuntimeAlone(t *testing.T) {
	h := newHost(newBin)
	st := h.withRuntime(false, pkgNew)
	e := h.env(driverPID, "v0.1.0")
	j, note := h.plannedRuntimeUpgrade(t, e, st)
	if j.Runtime != nil {
		t.Fatalf("a runtime join did not install is replaced: %+v", j.Runtime)
	}
	if !strings.Contains(note, "the host's own (join did not install it: no C:\\Program Files\\containerd\\installed-by-edgecore.json), kept as it is") {
		t.Errorf("note %q", note)
	}
	if r, out := h.run(t, j); r.Status != StatusSuccess {
		t.Fatalf("%+v\n%s", r, out)
	}
	if h.svc.rt.stops != 0 {
		t.Errorf("the operator's containerd was stopped")
	}
	h.wantRuntime(t, pkgSame)
}

func TestUpgradeReplacesTheRuntimeJoinInstalled(t *testing.T) {
	h := newHost(newBin)
	st := h.withRuntime(true, pkgNew)
	e := h.env(driverPID, "v0.1.0")
	j, note := h.plannedRuntimeUpgrade(t, e, st)
	if j.Runtime == nil {
		t.Fatal("no runtime swap planned")
	}
	wantLines(t, note, "containerd "+rtLine(rtOld)+" is replaced by the package's "+rtLine(rtNew),
		"must answer CRI at "+criPipe)
	r, out := h.run(t, j)
	if r.Status != StatusSuccess {
		t.Fatalf("%+v\n%s", r, out)
	}
	h.wantRuntime(t, pkgNew)
	h.must(t, h.exe, newBin)
	if v := h.recordVersions(t); v["containerd"] != rtNew["containerd"] || v["hcsshim"] != rtNew["hcsshim"] {
		t.Errorf("join's record names %v after the upgrade", v)
	}
	// The old runtime is in the backup, beside the node's files.
	for _, f := range runtimeinstall.Files {
		h.must(t, ospath.Join(ospath.Windows, h.paths.Backup("v0.1.0"), "runtime", f.Name), rtContent(f, pkgSame))
	}
	if h.svc.rt.stops != 1 || h.svc.rt.st.State != service.Running || h.svc.rt.running.version != rtNew["containerd"] {
		t.Errorf("containerd: %d stops, %v, running %s", h.svc.rt.stops, h.svc.rt.st.State, h.svc.rt.running.version)
	}
	wantLines(t, out,
		"back up C:\\Program Files\\edge core\\edgecore.exe, C:\\etc\\kubeedge\\config files\\edgecore.yaml, C:\\var\\lib\\kube edge\\edgecore.db and the container runtime (cni-plugins v1.10.0, containerd v2.1.4, hcsshim v0.13.0)",
		"and the container runtime with "+rtLine(rtNew),
		"stopped the service containerd; running containers keep running, each under its own runhcs shim",
		`C:\Program Files\containerd\bin\containerd-shim-runhcs-v1.exe was in use (a running container's shim): renamed to C:\Program Files\containerd\bin\containerd-shim-runhcs-v1.exe.old`,
		"containerd "+rtNew["containerd"]+" answers CRI at "+criPipe,
		"containerd still answers CRI")
	// containerd answers before edgecore starts.
	if strings.Index(out, "answers CRI at") > strings.Index(out, "the service runs (process") {
		t.Errorf("edgecore started before containerd answered:\n%s", out)
	}
	// The shim's old program still runs its container: it stays until
	// the next upgrade.
	if _, ok := h.fs.get(runtimeinstall.Files[2].Target(h.layout) + ".old"); !ok {
		t.Errorf("the running shim's program was removed")
	}
	if loaded := h.journal(t); loaded.Format != journalFormat {
		t.Errorf("journal format %d, want %d", loaded.Format, journalFormat)
	}

	// `edgecore.exe rollback` takes the runtime back too. The container
	// on the old shim has ended meanwhile: its renamed program goes.
	h.fs.shims = map[string]bool{}
	var rout bytes.Buffer
	h.alive[800] = true
	rr := Rollback(context.Background(), &rout, h.env(800, "v0.2.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if rr.Status != StatusSuccess {
		t.Fatalf("rollback: %+v\n%s", rr, rout.String())
	}
	h.wantRuntime(t, pkgSame)
	h.must(t, h.exe, oldBin)
	if v := h.recordVersions(t); v["containerd"] != "v2.1.4" {
		t.Errorf("join's record names %v after the rollback", v)
	}
	if h.svc.rt.stops != 2 || h.svc.rt.running.version != "v2.1.4" || h.svc.rt.st.State != service.Running {
		t.Errorf("containerd after the rollback: %d stops, %v, running %s", h.svc.rt.stops, h.svc.rt.st.State, h.svc.rt.running.version)
	}
	if _, ok := h.fs.get(runtimeinstall.Files[2].Target(h.layout) + ".old"); ok {
		t.Errorf("the shim's renamed program was kept after its container ended")
	}
	wantLines(t, rout.String(), "Container runtime: the backup's (cni-plugins v1.10.0, containerd v2.1.4, hcsshim v0.13.0) goes back",
		"restored the container runtime (", "containerd v2.1.4 answers CRI at")
}

func TestFailedGateRestoresTheRuntime(t *testing.T) {
	for _, tc := range []struct {
		name, binary, pkg, reason string
	}{
		{"containerd does not answer CRI", newBin, pkgNoCRI, "containerd does not answer CRI at " + criPipe},
		{"edgecore exits at once", badBin, pkgNew, "did not start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(tc.binary)
			st := h.withRuntime(true, tc.pkg)
			e := h.env(driverPID, "v0.1.0")
			j, _ := h.plannedRuntimeUpgrade(t, e, st)
			r, out := h.run(t, j)
			if r.Status != StatusRolledBack || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("%+v, want rolled back for %q\n%s", r, tc.reason, out)
			}
			h.wantRuntime(t, pkgSame)
			h.must(t, h.exe, oldBin)
			if v := h.recordVersions(t); v["containerd"] != "v2.1.4" {
				t.Errorf("join's record names %v", v)
			}
			if h.svc.rt.st.State != service.Running || h.svc.rt.running.version != "v2.1.4" || h.svc.rt.stops != 2 {
				t.Errorf("containerd: %d stops, %v, running %s", h.svc.rt.stops, h.svc.rt.st.State, h.svc.rt.running.version)
			}
			if h.svc.st.State != service.Running || h.svc.running.version != "v0.1.0" {
				t.Errorf("edgecore: %v, running %s", h.svc.st.State, h.svc.running.version)
			}
			wantLines(t, out, "restored the container runtime (", "containerd v2.1.4 answers CRI at")
		})
	}
}

func TestAJournalNamingOtherFilesAsTheRuntimeIsRefused(t *testing.T) {
	h := newHost(newBin)
	st := h.withRuntime(true, pkgNew)
	e := h.env(driverPID, "v0.1.0")
	j, _ := h.plannedRuntimeUpgrade(t, e, st)
	j.Phase = PhaseSwap
	for _, tc := range []struct {
		name   string
		change func(rs *RuntimeSwap)
		want   string
	}{
		{"target", func(rs *RuntimeSwap) { rs.Files[0].Target = `C:\Windows\System32\drivers\etc\hosts` }, "is not one join installs"},
		{"backup name", func(rs *RuntimeSwap) { rs.Files[0].Backup = `..\..\x` }, "has the backup name"},
		{"staged", func(rs *RuntimeSwap) { rs.Files[0].Staged = `C:\Users\Public\containerd.exe` }, "outside"},
		{"service", func(rs *RuntimeSwap) { rs.Service = "WinRM" }, `not "containerd"`},
		{"old", func(rs *RuntimeSwap) { rs.Old = []string{`C:\Windows\notepad.exe`} }, "not a renamed runtime file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := *j
			rs := *j.Runtime
			rs.Files = append([]RuntimeFile(nil), j.Runtime.Files...)
			tc.change(&rs)
			bad.Runtime = &rs
			if err := saveJournal(e, &bad); err != nil {
				t.Fatal(err)
			}
			_, err := loadJournal(e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAnIncompleteRuntimeInstallationIsRefused(t *testing.T) {
	h := newHost(newBin)
	st := h.withRuntime(true, pkgNew)
	h.fs.shims = map[string]bool{}
	h.fs.Remove(runtimeinstall.Files[3].Target(h.layout))
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db, Version: "v0.1.0"}
	_, _, err := planRuntime(h.env(driverPID, "v0.1.0"), h.facts(), in, st)
	if err == nil || !strings.Contains(err.Error(), "the container runtime join installed is incomplete") || !strings.Contains(err.Error(), "win-bridge.exe") {
		t.Errorf("got %v", err)
	}
}

// realRuntimeEnv is realEnv with containerd's folders in its root, and
// containerd v1 installed there, recorded as join's when byJoin.
func realRuntimeEnv(t *testing.T, byJoin bool) (Env, string) {
	t.Helper()
	e, root := realEnv(t)
	l := config.NewLayout(config.Host{GOOS: "linux"})
	for _, f := range []*string{&l.ContainerdDir, &l.ContainerdConfigFile, &l.CNIBinDir, &l.CNIConfDir} {
		*f = filepath.Join(root, *f)
	}
	e.Runtime = RuntimeEnv{Layout: l, CRI: func(context.Context, string) (hostprobe.CRIStatus, error) {
		return hostprobe.CRIStatus{}, errors.New("not asked when staging")
	}}
	rec := runtimeinstall.Record{Service: runtimeinstall.ServiceName, Versions: rtOld}
	for _, f := range runtimeinstall.Files {
		p := f.Target(l)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(rtContent(f, pkgSame)), 0o755); err != nil {
			t.Fatal(err)
		}
		rec.Files = append(rec.Files, p)
	}
	if byJoin {
		data, _ := rec.Encode()
		os.WriteFile(runtimeinstall.RecordFile(l), data, 0o644)
	}
	return e, root
}

// runtimeZip is a v0.2.0 package carrying the runtime pkg, or only n of
// its programs.
func runtimeZip(t *testing.T, dir, pkg string, n int) string {
	t.Helper()
	extra := map[string][]byte{}
	for i, f := range runtimeinstall.Files {
		if i < n {
			extra[f.PackagePath()] = []byte(rtContent(f, pkg))
		}
	}
	v, _ := json.Marshal(rtNew)
	extra[runtimeinstall.BundleDir+"/"+runtimeinstall.ManifestFile] = v
	return writeZipWith(t, dir, linuxManifest("v0.2.0"), fakeELF(), extra)
}

func TestStagePackageUnpacksTheRuntimeOnlyWhenTheHostNeedsIt(t *testing.T) {
	target := release.Target{OS: "linux", Arch: "amd64", Installed: "v0.1.0"}
	in := Installed{Service: "edgecore", ConfigFile: "/etc/kubeedge/config/edgecore.yaml", Version: "v0.1.0"}
	facts := Facts{CRIEndpoint: func(string) (string, error) { return criPipe, nil }}
	for _, tc := range []struct {
		name     string
		byJoin   bool
		pkg      string
		unpacked bool
		planned  bool
		wantNote string
	}{
		{"a new runtime over join's", true, pkgNew, true, true, "is replaced by the package's"},
		{"the same runtime", true, pkgSame, false, false, "containerd is not restarted"},
		{"the operator's runtime", false, pkgNew, false, false, "the host's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, root := realRuntimeEnv(t, tc.byJoin)
			zip := runtimeZip(t, filepath.Join(root, "downloads"), tc.pkg, len(runtimeinstall.Files))
			var out bytes.Buffer
			st, err := stagePackage(e, zip, "", target, nil, &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if st.Runtime == nil || st.Runtime.Versions["containerd"] != rtNew["containerd"] || len(st.Runtime.Sums) != len(runtimeinstall.Files) {
				t.Fatalf("staged runtime %+v", st.Runtime)
			}
			containerd := filepath.Join(e.Paths.Staging("v0.2.0"), "runtime", "containerd", "containerd.exe")
			if exists(containerd) != tc.unpacked || (st.Runtime.Dir != "") != tc.unpacked {
				t.Errorf("unpacked %v (dir %q), want %v", exists(containerd), st.Runtime.Dir, tc.unpacked)
			}
			again, err := loadStaged(e, "v0.2.0")
			if err != nil {
				t.Fatal(err)
			}
			rs, note, err := planRuntime(e, facts, in, again)
			if err != nil || (rs != nil) != tc.planned || !strings.Contains(note, tc.wantNote) {
				t.Errorf("plan %+v %q %v, want planned %v and %q", rs, note, err, tc.planned, tc.wantNote)
			}
			if tc.unpacked {
				os.WriteFile(containerd, []byte("changed"), 0o755)
				if _, err := loadStaged(e, "v0.2.0"); err == nil || !strings.Contains(err.Error(), "changed after it was verified") {
					t.Errorf("a changed staged runtime program: %v", err)
				}
			}
		})
	}
	t.Run("part of a runtime", func(t *testing.T) {
		e, root := realRuntimeEnv(t, true)
		zip := runtimeZip(t, filepath.Join(root, "downloads"), pkgNew, 4)
		_, err := stagePackage(e, zip, "", target, nil, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "folder has 4 of the 6 programs of the container runtime") {
			t.Errorf("got %v", err)
		}
	})
}
