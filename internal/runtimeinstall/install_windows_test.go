package runtimeinstall_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/registries"
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

// defaultEndpoint is containerd's default pipe, where the installed
// config.toml (which names none) makes it listen, and what join
// configures as the kubelet's runtime endpoint.
const defaultEndpoint = "npipe://./pipe/containerd-containerd"

// TestBundledContainerdInstallsAndAnswersCRI installs the runtime the
// release bundles (make wine-test puts build/runtime.sh's programs beside
// edgecore.exe, as the zip does) into a containerd folder of its own, with
// the real file, ACL and service adapters: the programs and config.toml
// land there restricted, the containerd service is registered with its
// command line, the real containerd.exe run with exactly that command line
// loads that config.toml, answers CRI Version and Status through its pipe
// and writes its log file, and what reset does with the record leaves
// nothing behind but containerd's own log. A --registry-config goes with
// it: its hosts.toml, the CA's copy and config.toml's credentials are
// written with Windows paths, containerd.exe boots reading them, and the
// removal takes them back.
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
	d := deps.ForHost(host, "", nil)
	d.Services = services{}
	h := runtimeinstall.OSHost(d)
	// join --registry-config's file: a mirror of docker.io behind a
	// private CA, with credentials.
	siteCA := filepath.Join(tmp, "site-ca.pem")
	if err := os.WriteFile(siteCA, []byte("the site's CA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const regPassword = "s3cret-registry-pass"
	regs, err := registries.Parse([]byte(fmt.Sprintf(`mirrors:
  docker.io:
    endpoint: ["https://harbor.example:5000"]
configs:
  "harbor.example:5000":
    auth: {username: edge, password: %s}
    tls: {ca_file: '%s'}
`, regPassword, siteCA)), config.Windows)
	if err != nil {
		t.Fatal(err)
	}
	o := runtimeinstall.Options{Layout: l, ReleaseDir: release, Choice: runtimeinstall.ChoiceBundled, Endpoint: defaultEndpoint,
		SandboxImage: config.WindowsSandboxImage, Timeout: 30 * time.Second, Registries: regs,
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
		// Everything the installation wrote goes; containerd's own log,
		// which the service wrote, stays for the operator, and with it
		// the folder, as the removal says.
		left, err := os.ReadDir(l.ContainerdDir)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			t.Error(err)
		case len(left) != 1 || left[0].Name() != "containerd.log" || !strings.Contains(rm.String(), "kept "+l.ContainerdDir):
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Errorf("%s holds %q after the removal, want containerd's log at most:\n%s", l.ContainerdDir, names, rm.String())
		default:
			os.Remove(filepath.Join(l.ContainerdDir, "containerd.log"))
			os.Remove(l.ContainerdDir)
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
	// The registry configuration with Windows paths and folder names (no
	// colon): hosts.toml per registry, the CA copied beside it, the
	// credentials in config.toml only, and no password in the output.
	certs := runtimeinstall.RegistryDir(l)
	if data, err := os.ReadFile(filepath.Join(certs, "docker.io", "hosts.toml")); err != nil || !strings.Contains(string(data), `[host."https://harbor.example:5000"]`) {
		t.Errorf("docker.io's hosts.toml: %v\n%s", err, data)
	}
	if data, err := os.ReadFile(filepath.Join(certs, "harbor.example_5000_", "ca.crt")); err != nil || string(data) != "the site's CA\n" {
		t.Errorf("the CA's copy: %q %v", data, err)
	}
	if data, err := os.ReadFile(l.ContainerdConfigFile); err != nil || !strings.Contains(string(data), "config_path = '"+certs+"'") ||
		!strings.Contains(string(data), regPassword) {
		t.Errorf("config.toml names no registry folder or credentials (%v):\n%s", err, data)
	}
	if strings.Contains(out.String(), regPassword) {
		t.Errorf("the installation's output shows the registry password:\n%s", out.String())
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

	// The very command line the service manager holds for the service
	// join registered (--config, --run-service, --log-file), run as the
	// service manager runs it: CreateProcess with that string, and no
	// console (--run-service allocates one of its own, which fails in a
	// process that inherited its parent's). Outside a service,
	// containerd's --run-service runs its service handler interactively
	// and still logs to --log-file only. Its root and state are the ones
	// join's config.toml names; its pipe is containerd's default, the
	// endpoint join configures.
	argv, err := service.SplitCommandLine(svc.CommandLine)
	if err != nil || len(argv) == 0 || !strings.EqualFold(argv[0], containerd) {
		t.Fatalf("the registered command line %q splits into %q (%v), not one that runs %s", svc.CommandLine, argv, err, containerd)
	}
	cmd := exec.Command(argv[0])
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: svc.CommandLine, CreationFlags: windows.DETACHED_PROCESS}
	var console bytes.Buffer
	cmd.Stdout, cmd.Stderr = &console, &console
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	logFile := filepath.Join(l.ContainerdDir, "containerd.log")
	output := func() string {
		log, _ := os.ReadFile(logFile)
		return fmt.Sprintf("containerd run as %s\nits log file %s:\n%s\nits console:\n%s", svc.CommandLine, logFile, log, console.String())
	}
	// Started by hand, containerd is not the containerd service's
	// process: the node's own probe refuses it, naming the process.
	pid := cmd.Process.Pid
	_, err = runtimeinstall.WaitCRI(ctx, h, defaultEndpoint, 30*time.Second)
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || refused.Facts.Server.PID != pid {
		t.Fatalf("the probe of a containerd started by hand (process %d): %v, want a refusal naming it\n%s", pid, err, output())
	}
	t.Logf("refused as it should be: %v", err)
	// Under Wine every process runs as one user and containerd cannot
	// run as a service: the test stands in for the service manager.
	trust := servertrusttest.AsService(pid)
	h.CRI = hostprobe.CRIProbe(trust)
	cri, err := runtimeinstall.WaitCRI(ctx, h, defaultEndpoint, 30*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, output())
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
	t.Logf("containerd %s, run as the service's command line %s, answered CRI Version and Status at %s: %+v", cri.RuntimeVersion, svc.CommandLine, defaultEndpoint, cri.Conditions)
	// --log-file takes containerd's whole log: the file the operator is
	// told to read has the start and the CRI plugin's.
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("containerd's log file: %v", err)
	}
	// "configs is deprecated": containerd read config.toml's registry
	// credentials (the table is deprecated upstream, read by 2.3 and 2.4)
	// and booted with its config_path.
	for _, want := range []string{"containerd successfully booted", "io.containerd.grpc.v1.cri", "`configs` is deprecated"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("containerd's log file %s lacks %q:\n%s", logFile, want, log)
		}
	}
	if console.Len() != 0 {
		t.Logf("containerd's console (its log goes to the file):\n%s", console.String())
	}
	// Containers themselves need vmcompute, computestorage and
	// computenetwork, which Wine has not: the journey runs pods on the fake
	// runtime.
}
