package runtimeinstall_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/internal/servertrust/servertrusttest"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

func isWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// services is the host's service manager. Under Wine a started containerd
// never reports Running (Wine puts every process in session 1), so there
// Start is not asked and the test starts containerd.exe itself.
type services struct{ deps.WindowsServices }

func (s services) Start(name string) error {
	if isWine() {
		return errWineStart
	}
	return s.WindowsServices.Start(name)
}

var errWineStart = errors.New("not started: Wine's service manager never sees containerd report Running")

// TestBundledContainerdInstallsAndAnswersCRI installs the runtime the
// release bundles (make wine-test puts build/runtime.sh's programs beside
// edgecore.exe, as the zip does) into a containerd folder of its own, with
// the real file, ACL and service adapters: the programs and config.toml
// land there restricted, the containerd service is registered with its
// command line, the real containerd.exe loads that config.toml and answers
// CRI Version and Status through its pipe, and what reset does with the
// record leaves nothing behind.
func TestBundledContainerdInstallsAndAnswersCRI(t *testing.T) {
	if os.Getenv("EDGECORE_SERVICE_TEST") != "1" {
		t.Skip("installs the containerd service: set EDGECORE_SERVICE_TEST=1 in an elevated prompt (or under Wine) to run it")
	}
	release := filepath.Dir(os.Getenv("EDGECORE_EXE"))
	if _, err := os.Stat(filepath.Join(release, runtimeinstall.BundleDir, "containerd", "containerd.exe")); err != nil {
		t.Skipf("no bundled runtime beside EDGECORE_EXE (%v): `make wine-test` puts it there", err)
	}
	if st, err := service.Query(runtimeinstall.ServiceName); err != nil || st.Installed {
		t.Skipf("this host has a containerd service already (%v): the test would not install the bundled one", err)
	}
	// Not t.TempDir: os.RemoveAll's walk fails under Wine ("Invalid
	// function"); hostfs.RemoveTree is the walk that works there.
	tmp, err := os.MkdirTemp("", "bundle-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hostfs.RemoveTree(hostfs.OS{}, config.Windows, tmp); err != nil {
			t.Logf("left %s: %v", tmp, err)
		}
	})
	host := config.Host{GOOS: config.Windows, SystemDrive: "C:", ProgramFiles: filepath.Join(tmp, "Program Files"), ProgramData: filepath.Join(tmp, "ProgramData")}
	for _, d := range []string{host.ProgramFiles, host.ProgramData} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := config.NewLayout(host)
	// A pipe of the test's own: nothing else in the prefix answers there.
	pipe := `\\.\pipe\containerd-bundle-test`
	endpoint := "npipe://./pipe/containerd-bundle-test"
	d := deps.ForHost(host, "", nil)
	d.Services = services{}
	h := runtimeinstall.OSHost(d)
	o := runtimeinstall.Options{Layout: l, ReleaseDir: release, Choice: runtimeinstall.ChoiceBundled, Endpoint: endpoint,
		SandboxImage: config.WindowsSandboxImage, Timeout: 30 * time.Second,
		Versions: runtimeinstall.BundleVersions(h, config.Windows, release)}
	ctx := context.Background()
	in, err := runtimeinstall.Decide(ctx, o, h)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Installs() {
		t.Fatalf("the bundled runtime would not be installed: %s", in.Reason())
	}
	st := in.Steps()
	var out bytes.Buffer
	if err := st[0].Do(ctx, &out); err != nil {
		t.Fatalf("%s: %v\n%s", st[0].Name, err, out.String())
	}
	t.Cleanup(func() {
		rec, ok, err := runtimeinstall.ReadRecord(h, l)
		if err != nil || !ok {
			t.Errorf("no record of the installation: %v", err)
			return
		}
		var rm bytes.Buffer
		if err := runtimeinstall.Remove(&rm, h, l, rec); err != nil {
			t.Errorf("removing what was installed: %v\n%s", err, rm.String())
		}
		if _, err := os.Stat(l.ContainerdDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after the removal (%v):\n%s", l.ContainerdDir, err, rm.String())
		}
		if st, _ := service.Query(runtimeinstall.ServiceName); st.Installed {
			t.Errorf("the containerd service is left after the removal")
		}
	})
	containerd := filepath.Join(runtimeinstall.BinDir(l), "containerd.exe")
	for _, p := range []string{containerd, filepath.Join(l.CNIBinDir, "win-bridge.exe"), l.ContainerdConfigFile} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}

	if err := st[1].Do(ctx, &out); err != nil {
		t.Fatalf("%s: %v\n%s", st[1].Name, err, out.String())
	}
	svc, qerr := service.Query(runtimeinstall.ServiceName)
	if qerr != nil || !svc.Installed || svc.StartType != service.StartAutomatic || !strings.Contains(svc.CommandLine, "--run-service") {
		t.Errorf("the containerd service: %+v %v", svc, qerr)
	}
	err = st[2].Do(ctx, &out)
	if !errors.Is(err, errWineStart) {
		if err != nil {
			t.Fatalf("%s: %v\n%s", st[2].Name, err, out.String())
		}
		return // Windows: the service itself answered the CRI.
	}
	t.Log("under Wine containerd is started by hand, not by the service manager: it never reports Running there (every process is in session 1)")

	cmd := exec.Command(containerd, "--config", l.ContainerdConfigFile, "--address", pipe,
		"--root", filepath.Join(tmp, "root"), "--state", filepath.Join(tmp, "state"))
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// Started by hand, containerd is not the containerd service's
	// process, and its pipe has go-winio's default descriptor: the node's
	// own probe refuses it, naming the process.
	pid := cmd.Process.Pid
	_, err = runtimeinstall.WaitCRI(ctx, h, endpoint, 30*time.Second)
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || refused.Facts.Server.PID != pid {
		t.Fatalf("the probe of a containerd started by hand (process %d): %v, want a refusal naming it\ncontainerd's output:\n%s", pid, err, log.String())
	}
	t.Logf("refused as it should be: %v", err)
	// Under Wine every process runs as one user and containerd cannot
	// run as a service: the test stands in for the service manager.
	trust := servertrusttest.AsService(pid)
	h.CRI = hostprobe.CRIProbe(trust)
	cri, err := runtimeinstall.WaitCRI(ctx, h, endpoint, 30*time.Second)
	if err != nil {
		t.Fatalf("%v\ncontainerd's output:\n%s", err, log.String())
	}
	if cri.RuntimeName != "containerd" || cri.RuntimeVersion != o.Versions["containerd"] || cri.RuntimeAPIVersion != "v1" {
		t.Errorf("CRI Version answered %+v, want containerd %s", cri, o.Versions["containerd"])
	}
	conditions := map[string]bool{}
	for _, c := range cri.Conditions {
		conditions[c.Type] = c.Status
	}
	if _, ok := conditions["RuntimeReady"]; !ok {
		t.Errorf("CRI Status has no RuntimeReady condition: %+v", cri.Conditions)
	}
	t.Logf("containerd %s answered CRI Version and Status at %s: %+v", cri.RuntimeVersion, endpoint, cri.Conditions)
	if !strings.Contains(log.String(), l.CNIConfDir) && !strings.Contains(log.String(), "cni") {
		t.Logf("containerd's output does not name the CNI folder of the written config.toml")
	}
	// Containers themselves need vmcompute, computestorage and
	// computenetwork, which Wine has not: the journey runs pods on the fake
	// runtime.
}
