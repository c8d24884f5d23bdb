//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
)

// edge is one edge node: our edgecore and a fake container runtime, run
// natively on Linux or under Wine for Windows.
type edge struct {
	os       string // "linux" or "windows": the node's kubernetes.io/os
	name     string
	dir      string
	wine     []string // the Wine loader, for Windows
	env      []string
	bin      string
	cfgArg   string // the config path as edgecore sees it
	cfgPath  string // the same file on this host
	driveC   string // the Wine prefix's drive C on this host, for Windows
	fakecri  *proc
	edgecore *proc
	starts   int // of edgecore, each with a log of its own
	// console: the kubelet runs from a console, written into the
	// configuration before each start (consoleKubelet).
	console bool
	// nodeIP is the address `edgecore config` chose for the node, which
	// edgeStream announces to cloudcore and the API server dials.
	nodeIP string
}

// path turns a file of this host into the form the edge's binaries take:
// under the prefix's drive C a C:\ path, elsewhere one on Wine's Z: drive.
func (e *edge) path(p string) string {
	if e.os == "windows" {
		if rel, err := filepath.Rel(e.driveC, p); e.driveC != "" && err == nil && !strings.HasPrefix(rel, "..") {
			return `C:\` + strings.ReplaceAll(rel, "/", `\`)
		}
		return "Z:" + strings.ReplaceAll(p, "/", `\`)
	}
	return p
}

// windowsEdgeDir makes a Windows edge's directory on the prefix's drive C,
// as an operator's files are on a Windows host: edgecore refuses to keep a
// configuration with the join token below a folder others may rename, and
// under Wine the test's temporary folder (Z:\tmp, mode 1777) is one.
func windowsEdgeDir(t *testing.T, name string) (dir, driveC string) {
	t.Helper()
	driveC = filepath.Join(mustEnv(t, "WINEPREFIX"), "drive_c")
	base := filepath.Join(driveC, "e2e")
	if err := os.MkdirAll(base, 0o755); err != nil {
		fatal(t, err)
	}
	dir, err := os.MkdirTemp(base, name+"-")
	if err != nil {
		fatal(t, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, driveC
}

// installExe copies edgecore.exe to C:\Program Files\edgecore on the
// prefix's drive C, where the quick start has an operator copy it, and
// returns the copy: the node never runs from the checkout, which may lie
// in a folder others may change (/tmp), as no operator's does.
func installExe(t *testing.T, driveC, exe string) string {
	t.Helper()
	dir := filepath.Join(driveC, "Program Files", "edgecore")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(t, err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		fatal(t, err)
	}
	dst := filepath.Join(dir, "edgecore.exe")
	// A new file renamed into place: a program that still runs the old
	// one keeps its own.
	if err := os.WriteFile(dst+".new", data, 0o755); err != nil {
		fatal(t, err)
	}
	if err := os.Rename(dst+".new", dst); err != nil {
		fatal(t, err)
	}
	return dst
}

func (e *edge) command(bin string, args ...string) (string, []string) {
	if len(e.wine) > 0 {
		return e.wine[0], append(append(e.wine[1:], bin), args...)
	}
	return bin, args
}

func newEdge(t *testing.T, c *cluster, goos string) *edge {
	t.Helper()
	return newNamedEdge(t, c, goos, "e2e-"+goos)
}

// newNamedEdge prepares an edge node called name: its fake runtime running
// and its configuration written by our edgecore's config command.
func newNamedEdge(t *testing.T, c *cluster, goos, name string) *edge {
	t.Helper()
	e := &edge{os: goos, name: name, dir: t.TempDir()}
	if goos == "windows" {
		e.dir, e.driveC = windowsEdgeDir(t, name)
	}
	// Registered before the processes start, so it runs after they end:
	// the Linux kubelet bind-mounts its root directory.
	t.Cleanup(func() { unmountUnder(t, e.dir) })
	keepLogsOnFailure(t, e.dir)
	criEndpoint := "unix://" + filepath.Join(e.dir, "cri.sock")
	fake := mustEnv(t, "FAKECRI_BIN")
	e.bin = mustEnv(t, "EDGECORE_BIN")
	// Linux refuses the edge's startup check only when a kubelet runs;
	// none does here.
	if goos == "windows" {
		e.bin = e.path(installExe(t, e.driveC, mustEnv(t, "EDGECORE_EXE")))
		fake = mustEnv(t, "FAKECRI_EXE")
		e.wine = []string{mustEnv(t, "WINE")}
		e.env = []string{"WINEDEBUG=-all", "WINEPREFIX=" + mustEnv(t, "WINEPREFIX")}
		criEndpoint = "npipe://./pipe/containerd-containerd"
	}

	bin, args := e.command(fake, "--endpoint", criEndpoint, "-v", "--image-fs-dir", e.path(filepath.Join(e.dir, "images")))
	e.fakecri = start(t, e.dir, "fakecri", e.env, bin, args...)
	eventually(t, time.Minute, "fake CRI serving", func() (bool, error) {
		return e.fakecri.logContains("serving"), nil
	})

	e.cfgPath = filepath.Join(e.dir, "edgecore.yaml")
	e.cfgArg = e.path(e.cfgPath)
	bin, args = e.command(e.bin, "config", "-e", "127.0.0.1:"+strconv.Itoa(hubPort), "-s", strconv.Itoa(certPort), "-t", c.token(t),
		"-i", e.name, "-p", criEndpoint, "-o", e.cfgArg)
	if portOffset != 0 {
		// config checks cloudStream's tunnel at its fixed port, 10004;
		// adjustConfig names the moved one.
		args = append(args, "--stream=false")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), e.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fatalf(t, "edgecore config: %v\n%s", err, out)
	}
	e.adjustConfig(t)
	return e
}

// adjustConfig keeps everything the node writes inside the test's
// directory and turns off the modules the scenario does not use.
func (e *edge) adjustConfig(t *testing.T) {
	t.Helper()
	host := config.Host{GOOS: e.os}
	cfg, _, err := config.Load(e.cfgPath, host)
	if err != nil {
		fatalf(t, "the generated configuration does not load: %v", err)
	}
	in := func(parts ...string) string { return e.path(filepath.Join(append([]string{e.dir}, parts...)...)) }
	cfg.DataBase.DataSource = in("edgecore.db")
	hub := cfg.Modules.EdgeHub
	hub.TLSCAFile, hub.TLSCertFile, hub.TLSPrivateKeyFile = in("ca", "rootCA.crt"), in("certs", "server.crt"), in("certs", "server.key")
	ed := cfg.Modules.Edged
	ed.RootDirectory = in("kubelet")
	k := ed.TailoredKubeletConfig
	k.StaticPodPath, k.PodLogsDir = in("manifests"), in("pods")
	// The test host's one disk is shared with build caches and may be
	// more than 85% full, which the kubelet's default imagefs.available
	// 15% turns into DiskPressure and refused pods. The scenario is about
	// edgecore, not this host's disk, so only a nearly full disk counts.
	k.EvictionHard = map[string]string{
		"memory.available": "100Mi", "nodefs.available": "1Gi", "imagefs.available": "1Gi",
		"nodefs.inodesFree": "5%", "imagefs.inodesFree": "5%",
	}
	// edgeStream stays on as config wrote it, with the node's
	// certificates where edgehub puts them.
	st := cfg.Modules.EdgeStream
	st.TLSTunnelCAFile, st.TLSTunnelCertFile, st.TLSTunnelPrivateKeyFile = hub.TLSCAFile, hub.TLSCertFile, hub.TLSPrivateKeyFile
	if portOffset != 0 {
		st.Enable, st.TunnelServer = true, "127.0.0.1:"+strconv.Itoa(tunnelPort)
	}
	// A second loopback cloud beside the first (E2E_PORT_OFFSET) gives its
	// nodes another address of this host: each cloudcore hands the first
	// node that connects kubelet port 10351, and the stand-in for
	// cloudcore's iptables rule listens on <node IP>:<that port>.
	if ip := os.Getenv("E2E_NODE_IP"); ip != "" {
		ed.NodeIP = ip
	}
	e.nodeIP = ed.NodeIP
	if e.os == "windows" {
		// Wine has no HNS, which the Windows kubelet asks for each pod's
		// network statistics unless it takes all pod statistics from the
		// runtime's ListPodSandboxStats, as containerd answers it on
		// Windows (the fake runtime too).
		if k.FeatureGates == nil {
			k.FeatureGates = map[string]bool{}
		}
		k.FeatureGates["PodAndContainerStatsFromCRI"] = true
	}
	cfg.Modules.EventBus.Enable = false
	cfg.Modules.DeviceTwin.Enable = false
	data, err := yaml.Marshal(cfg)
	if err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(e.cfgPath, data, 0o600); err != nil {
		fatal(t, err)
	}
	if e.os == "linux" {
		// No per-QoS cgroups, as on Windows. Every Linux node of a run
		// shares this host's cgroup hierarchy: each kubelet removes the pod
		// cgroups of pods it does not know (the other nodes'), and a
		// kubelet whose running pod lost its cgroup kills the pod's
		// containers to start them again under it. Two nodes side by side
		// (the chaos parts, the fleet) restarted each other's pods within
		// a second of every start, into CrashLoopBackOff. Enforcement
		// "none": an empty list is taken for the default ["pods"], which
		// the kubelet refuses without per-QoS cgroups.
		setYAML(t, e.cfgPath, []string{"modules", "edged", "tailoredKubeletConfig", "cgroupsPerQOS"}, false)
		setYAML(t, e.cfgPath, []string{"modules", "edged", "tailoredKubeletConfig", "enforceNodeAllocatable"}, []any{"none"})
	}
}

func (e *edge) startEdgecore(t *testing.T) {
	t.Helper()
	if e.console {
		consoleKubelet(t, e)
	}
	args := []string{"--config", e.cfgArg}
	// E2E_EDGECORE_V=N: the node's log at verbosity N (the kubelet's
	// reasons for what it does are at 2 and above).
	if v := os.Getenv("E2E_EDGECORE_V"); v != "" {
		args = append(args, "--v="+v)
	}
	bin, args := e.command(e.bin, args...)
	// A log for each run: a failure after a restart shows the run
	// before it too.
	name := "edgecore"
	if e.starts++; e.starts > 1 {
		name = fmt.Sprintf("edgecore-%d", e.starts)
	}
	e.edgecore = start(t, e.dir, name, e.env, bin, args...)
}

// peakRSS is the most memory the edgecore process has held, in MiB (under
// Wine, the process that runs edgecore.exe).
func (e *edge) peakRSS() float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(e.edgecore.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(t *testing.T, dir string) {
	data, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			points = append(points, f[1])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		if err := syscall.Unmount(points[i], syscall.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", points[i], err)
		}
	}
}
