package upgrade

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// runtimeServices records what the swap asks of containerd's service.
type runtimeServices struct {
	// Services is nil: the swap never installs or deletes a service, so
	// Install, Installed and Uninstall, left to it, panic and fail the test.
	deps.Services
	calls []string
}

func (s *runtimeServices) Query(name string) (service.Status, error) {
	return service.Status{Name: name, Installed: true, State: service.Stopped}, nil
}
func (s *runtimeServices) Start(name string) error {
	s.calls = append(s.calls, "start "+name)
	return nil
}
func (s *runtimeServices) Stop(name string) error {
	s.calls = append(s.calls, "stop "+name)
	return nil
}
func (s *runtimeServices) SetCommandLine(name, _ string) error {
	s.calls = append(s.calls, "set command line "+name)
	return nil
}

// TestRuntimeHelperProcess is the running container's shim of
// TestRuntimeSwapOnWindowsFiles: a process started from the shim's
// program, which it holds until its input closes.
func TestRuntimeHelperProcess(t *testing.T) {
	if os.Getenv("EDGECORE_RUNTIME_SHIM") != "1" {
		t.Skip("started by TestRuntimeSwapOnWindowsFiles")
	}
	os.Stdout.WriteString("shim running\n")
	io.Copy(io.Discard, os.Stdin)
}

// TestRuntimeSwapOnWindowsFiles swaps the runtime join installed for a
// package's and restores it from the backup, with the host's file system:
// the folders are created restricted as join creates them, one program is
// held by a running process as a container's shim holds its program, and
// each replaced file must carry the folder's ACL, as the file join copied
// there does. The service restart and the CRI wait are the unit tests'
// (runtime_test.go): under Wine a containerd started by the service
// manager never reports Running (Wine puts every process in session 1),
// and no container runs there whose survival could be watched.
func TestRuntimeSwapOnWindowsFiles(t *testing.T) {
	// Not t.TempDir: its removal walks the tree, which fails under Wine.
	tmp, err := os.MkdirTemp("", "runtime swap ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testdir.Remove(t, tmp) })
	host := config.Host{GOOS: config.Windows, SystemDrive: "C:", ProgramFiles: filepath.Join(tmp, "Program Files")}
	l := config.NewLayout(host)
	paths := Paths{GOOS: config.Windows, KubeEdgeDir: filepath.Join(tmp, "kubeedge"), BackupRoot: filepath.Join(tmp, "kubeedge", "backup"),
		StateDir: filepath.Join(tmp, "kubeedge", "upgrade")}
	paths.Journal = filepath.Join(paths.StateDir, "journal.json")
	paths.BackupIndex = filepath.Join(paths.StateDir, backupIndexFile)
	svcs := &runtimeServices{}
	e := Env{GOOS: config.Windows, Paths: paths, FS: hostfs.OS{}, Services: svcs, Service: "edgecore", Clock: clock.Real{},
		Restrict: func(string) error { return nil },
		Runtime: RuntimeEnv{Layout: l, CRI: func(context.Context, string) (hostprobe.CRIStatus, error) {
			return hostprobe.CRIStatus{RuntimeName: "containerd"}, nil
		}}}

	// The installation as join makes it: restricted folders, the
	// programs copied in, the record.
	acls := protect.HostACLs()
	targets := []protect.Target{{What: "containerd's folder", Path: l.ContainerdDir, Restrict: true}}
	for _, d := range []string{l.ContainerdDir, runtimeinstall.BinDir(l), l.CNIBinDir} {
		if _, err := protect.Create(config.Windows, targets, d, acls); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	selfData, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	shim := runtimeinstall.Files[2].Target(l)
	rec := runtimeinstall.Record{Service: runtimeinstall.ServiceName, Versions: rtOld}
	for _, f := range runtimeinstall.Files {
		data := []byte(rtContent(f, pkgSame))
		if f.Target(l) == shim {
			data = selfData
		}
		if err := os.WriteFile(f.Target(l), data, 0o755); err != nil {
			t.Fatal(err)
		}
		rec.Files = append(rec.Files, f.Target(l))
	}
	recData, _ := rec.Encode()
	if err := os.WriteFile(runtimeinstall.RecordFile(l), recData, 0o644); err != nil {
		t.Fatal(err)
	}
	joinSDDL, err := acl.Describe(runtimeinstall.Files[0].Target(l))
	if err != nil {
		t.Fatal(err)
	}
	// A container's shim runs from the installed program.
	cmd := exec.Command(shim, "-test.run=^TestRuntimeHelperProcess$")
	cmd.Env = append(os.Environ(), "EDGECORE_RUNTIME_SHIM=1")
	stdin, _ := cmd.StdinPipe()
	var shimOut bytes.Buffer
	cmd.Stdout = &shimOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { stdin.Close(); <-exited }()
	for i := 0; i < 100 && !strings.Contains(shimOut.String(), "shim running"); i++ {
		time.Sleep(100 * time.Millisecond)
	}

	// The package's runtime, staged; the edgecore files the backup takes
	// with it.
	st := &Staged{Manifest: release.Manifest{Version: "v0.2.0"}, Runtime: &StagedRuntime{Versions: rtNew, Sums: map[string]string{},
		Dir: filepath.Join(paths.Staging("v0.2.0"), "runtime")}}
	for _, f := range runtimeinstall.Files {
		p := st.Runtime.file(config.Windows, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		c := rtContent(f, pkgNew)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		st.Runtime.Sums[f.PackagePath()] = sum(c)
	}
	in := Installed{Service: "edgecore", Executable: filepath.Join(tmp, "edge core", "edgecore.exe"), ConfigFile: filepath.Join(tmp, "edgecore.yaml"),
		DataSource: filepath.Join(tmp, "edgecore.db"), Version: "v0.1.0"}
	os.MkdirAll(filepath.Dir(in.Executable), 0o755)
	for _, p := range []string{in.Executable, in.ConfigFile, in.DataSource} {
		os.WriteFile(p, []byte("v0.1.0's "+filepath.Base(p)), 0o644)
	}
	f := Facts{CRIEndpoint: func(string) (string, error) { return criPipe, nil }}
	rs, note, err := planRuntime(e, f, in, st)
	if err != nil || rs == nil {
		t.Fatalf("plan: %v %q %v", rs, note, err)
	}
	j := newJournal(e, KindUpgrade, in, time.Minute)
	j.To, j.Backup, j.Runtime, j.Phase = "v0.2.0", paths.Backup("v0.1.0"), rs, PhaseSwap
	var out bytes.Buffer
	d := &driver{e: e, j: j, out: &out}
	if _, err := backup(e, j, "v0.1.0", &out); err != nil {
		t.Fatal(err)
	}

	if err := d.swapRuntime(); err != nil {
		t.Fatalf("swap: %v\n%s", err, out.String())
	}
	for _, f := range runtimeinstall.Files {
		wantFile(t, f.Target(l), rtContent(f, pkgNew))
		if got, err := acl.Describe(f.Target(l)); err != nil || got != joinSDDL {
			t.Errorf("%s has the ACL %s (%v), not %s as the program join copied", f.Target(l), got, err, joinSDDL)
		}
	}
	if old, err := os.ReadFile(shim + ".old"); err != nil || !bytes.Equal(old, selfData) {
		t.Errorf("the running shim's program was not renamed to %s.old (%v)", shim, err)
	}
	select {
	case err := <-exited:
		t.Fatalf("the shim's process ended during the swap: %v", err)
	default:
	}
	if strings.Join(svcs.calls, ", ") != "stop containerd" {
		t.Errorf("service calls %v, want the stop of containerd", svcs.calls)
	}

	b, err := readBackup(e, j.Backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.restoreRuntime(b); err != nil {
		t.Fatalf("restore: %v\n%s", err, out.String())
	}
	for _, f := range runtimeinstall.Files {
		want := rtContent(f, pkgSame)
		if f.Target(l) == shim {
			want = string(selfData)
		}
		wantFile(t, f.Target(l), want)
	}
	wantFile(t, runtimeinstall.RecordFile(l), string(recData))
	t.Log(out.String())
}

func wantFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		if len(got) > 40 {
			got = got[:40]
		}
		t.Errorf("%s holds %q... (%v), want %.40q", path, got, err, want)
	}
}
