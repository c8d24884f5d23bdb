//go:build wine

package wine

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// wineProcess is a Windows program running under Wine whose combined
// output is kept for inspection while it runs.
type wineProcess struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	out    strings.Builder
}

// startWine starts exe under Wine and ends it when the test ends.
func startWine(t *testing.T, exe string, args ...string) *wineProcess {
	t.Helper()
	p := &wineProcess{name: exe, exited: make(chan struct{})}
	p.cmd = exec.Command(winePath(t), append([]string{exe}, args...)...)
	p.cmd.Env = append(os.Environ(), "WINEDEBUG=-all")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(strings.TrimSuffix(sc.Text(), "\r") + "\n")
			p.mu.Unlock()
		}
		r.Close()
	}()
	go func() { p.cmd.Wait(); close(p.exited) }()
	// Killing the Wine loader ends the Windows process, and with it every
	// pipe it serves.
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.exited })
	return p
}

func (p *wineProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *wineProcess) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// waitFor waits until the output holds want, the process exits or timeout
// passes, and tells whether want appeared.
func (p *wineProcess) waitFor(timeout time.Duration, want string) bool {
	deadline := time.Now().Add(timeout)
	for {
		if strings.Contains(p.log(), want) {
			return true
		}
		if !p.running() {
			// Output written just before the exit may still be in the pipe.
			time.Sleep(200 * time.Millisecond)
			return strings.Contains(p.log(), want)
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func fakecriExe(t *testing.T) string {
	t.Helper()
	exe := os.Getenv("FAKECRI_EXE")
	if exe == "" {
		t.Fatal("FAKECRI_EXE is not set: run these tests with `make wine-test`")
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("FAKECRI_EXE: %v", err)
	}
	return exe
}

// With a container runtime answering on containerd's named pipe, the
// embedded kubelet must get all the way to "Started kubelet" under Wine and
// keep running: without AF_UNIX its device plugin server cannot listen,
// which patches/0002 turns from an exit into a warning, and its node stats
// need the Windows version, registry values and performance counters that
// build/wine/setup.sh puts into the prefix.
func TestKubeletStartsAgainstFakeCRI(t *testing.T) {
	exe := edgecoreExe(t)
	_, kubernetes := upstreamVersions(t)
	cri := startWine(t, fakecriExe(t), "--v")
	if !cri.waitFor(time.Minute, "serving CRI v1 on npipe://./pipe/containerd-containerd") {
		t.Fatalf("fakecri.exe did not start serving:\n%s", cri.log())
	}

	dir := t.TempDir()
	cfg := minimalConfig(t, dir, samplePriorityClass, "    windowsPriorityClass: BELOW_NORMAL_PRIORITY_CLASS")
	edge := startWine(t, exe, "--config", toWindowsPath(cfg))
	if !edge.waitFor(3*time.Minute, "Started kubelet") {
		t.Fatalf("the kubelet did not start (edgecore.exe running: %v)\nedgecore.exe:\n%s\nfakecri.exe:\n%s",
			edge.running(), edge.log(), cri.log())
	}
	// The device manager starts when the kubelet's sync loop first finds
	// the runtime ready, after "Started kubelet".
	const warning = "Device plugins are unavailable, running without them"
	if !edge.waitFor(time.Minute, warning) {
		t.Errorf("no warning about device plugins (edgecore.exe running: %v)", edge.running())
	}
	// Node stats are collected every 10 s; a missing counter, registry
	// value or Windows version shows within that. Without a cloud the node
	// object never reaches the local database, and the kubelet's CSINode
	// initialisation gives up with klog.Fatalf about 25 s after the start
	// (upstream behaviour, which a joined node does not meet), so the check
	// stays within that.
	time.Sleep(12 * time.Second)
	log := edge.log()
	if !edge.running() {
		t.Error("edgecore.exe exited after the kubelet started")
	}
	for _, want := range []string{
		`"Container runtime initialized" containerRuntime="fakecri"`,
		`apiVersion="v1"`,
		`"Kubelet version" kubeletVersion="` + kubernetes + `"`,
		`windowsPriorityClass="BELOW_NORMAL_PRIORITY_CLASS"`,
		"Failed to listen to socket while starting device plugin registry",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, warning) && !strings.HasPrefix(line, "W") {
			t.Errorf("the device plugin failure is not logged as a warning: %q", line)
		}
	}
	for _, bad := range []string{
		"Failed to start ContainerManager",
		"perf counter data",
		"unable to add process counter",
		"getOSInfo",
		"HardwareConfig",
		"Failed to start cAdvisor",
	} {
		if strings.Contains(log, bad) {
			t.Errorf("log contains %q", bad)
		}
	}
	if !strings.Contains(cri.log(), "/runtime.v1.RuntimeService/Version") {
		t.Error("fakecri.exe logged no Version call from the kubelet")
	}
	if t.Failed() {
		t.Logf("edgecore.exe log:\n%s\nfakecri.exe log:\n%s", log, cri.log())
	}
}
