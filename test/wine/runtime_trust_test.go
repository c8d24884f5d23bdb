//go:build wine

package wine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// servingPID is the Windows process id fakecri.exe logs with "serving".
var servingPID = regexp.MustCompile(`serving CRI v1 on \S+ \(process (\d+)\)`)

// startCRI starts fakecri.exe on containerd's pipe with args and returns
// it with its Windows process id.
func startCRI(t *testing.T, args ...string) (*wineProcess, string) {
	t.Helper()
	cri := startWine(t, fakecriExe(t), append([]string{"--v"}, args...)...)
	if !cri.waitFor(time.Minute, "serving CRI v1 on npipe://./pipe/containerd-containerd") {
		t.Fatalf("fakecri.exe did not start serving:\n%s", cri.log())
	}
	m := servingPID.FindStringSubmatch(cri.log())
	if m == nil {
		t.Fatalf("fakecri.exe did not say its process id:\n%s", cri.log())
	}
	return cri, m[1]
}

func (p *wineProcess) stop() {
	p.cmd.Process.Kill()
	<-p.exited
}

// A CRI server started before join that is not the containerd service's
// process and whose pipe its starter owns (fakecri.exe with go-winio's
// default descriptor, as any user's program serves it) is refused by
// `join --dry-run`, naming the pipe and its process id, and join changes
// nothing. Under Wine every process runs as the same user, so what makes
// it untrusted here is what makes it so on Windows: no containerd
// service runs it, and its pipe is owned by the account that started it.
// The positive control: the same program serving an administrators-only
// pipe, as an operator's runtime may, passes.
func TestJoinDryRunRefusesAUsersCRIServer(t *testing.T) {
	prefixC := filepath.Join(os.Getenv("WINEPREFIX"), "drive_c")
	cfg := filepath.Join(prefixC, "etc", "kubeedge", "config", "edgecore.yaml")
	hub, certPort, token := standInCloud(t)
	args := []string{"join", "-e", hub, "-s", certPort, "-t", token, "-i", "wine-node", "--stream=false", "--dry-run"}

	cri, pid := startCRI(t, "--pipe-sddl=")
	r := run(t, time.Minute, args...)
	out := r.stdout + r.stderr
	if r.code == 0 {
		t.Fatalf("join --dry-run accepted a CRI server a user started (process %s):\n%s", pid, out)
	}
	for _, want := range []string{
		`the container runtime's pipe \\.\pipe\containerd-containerd is served by process ` + pid + ` (`,
		"it is not the containerd service's process running as SYSTEM (the containerd service is not installed)",
		"fix: stop process " + pid,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("join's refusal lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Error("join --dry-run wrote the configuration")
	}
	if strings.Contains(cri.log(), "/runtime.v1.RuntimeService/") {
		t.Errorf("a CRI call reached the refused server:\n%s", cri.log())
	}
	cri.stop()

	startCRI(t)
	if r := run(t, time.Minute, args...); r.code != 0 {
		t.Errorf("join --dry-run refused a runtime serving an administrators-only pipe: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The kubelet's own connections are checked too (patches/0014): after
// the runtime it started with goes away, as containerd does when it
// restarts during an upgrade, a user's server that takes the pipe gets
// no call; the node logs the refusal with its process id.
func TestKubeletRefusesASquatterAfterTheRuntimeRestarts(t *testing.T) {
	exe := edgecoreExe(t)
	cri, _ := startCRI(t)
	dir := t.TempDir()
	cfg := minimalConfig(t, dir)
	edge := startWine(t, exe, "--config", toWindowsPath(cfg))
	if !edge.waitFor(3*time.Minute, "Started kubelet") {
		t.Fatalf("the kubelet did not start (edgecore.exe running: %v)\nedgecore.exe:\n%s\nfakecri.exe:\n%s",
			edge.running(), edge.log(), cri.log())
	}
	cri.stop()
	squatter, pid := startCRI(t, "--pipe-sddl=")
	want := `is served by process ` + pid + ` (`
	if !edge.waitFor(20*time.Second, want) {
		t.Errorf("edgecore.exe did not log a refusal of process %s within 20s (running: %v)", pid, edge.running())
	}
	if strings.Contains(squatter.log(), "/runtime.v1.") {
		t.Errorf("a CRI call reached the squatter:\n%s", squatter.log())
	}
	for _, line := range strings.Split(edge.log(), "\n") {
		if strings.Contains(line, want) {
			t.Logf("the refusal: %s", line)
			break
		}
	}
	if t.Failed() {
		t.Logf("edgecore.exe:\n%s\nsquatter:\n%s", edge.log(), squatter.log())
	}
}

// A process called kubelet.exe stops edgecore's start only when it is an
// installed kubelet: a program only administrators may change (or a
// service's process). The same program in a folder every account may
// write to, as a user's copy is, is named in the log and does not stop
// the node. Under Wine a file's DACL is made up from its Unix mode, so
// mode 0777 stands for a file others may change, 0755 for an
// administrator's.
func TestStartJudgesAKubeletByItsProgram(t *testing.T) {
	dir := driveCTempDir(t)
	kubelet := filepath.Join(dir, "kubelet.exe")
	data, err := os.ReadFile(fakecriExe(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubelet, data, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, kubelet} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	k := startWine(t, kubelet, "--endpoint", "npipe://./pipe/edgecore-test-kubelet")
	if !k.waitFor(time.Minute, "serving CRI v1") {
		t.Fatalf("kubelet.exe did not start:\n%s", k.log())
	}
	pid := servingPID.FindStringSubmatch(k.log())[1]
	cfg := minimalConfig(t, t.TempDir())

	log, ok := runUntil(t, 2*time.Minute, "Waiting for the container runtime", "--config", toWindowsPath(cfg))
	if !ok {
		t.Fatalf("a user's kubelet.exe (process %s) stopped edgecore.exe:\n%s", pid, log)
	}
	// klog quotes the value: its backslashes are doubled.
	quoted := strings.ReplaceAll(toWindowsPath(kubelet), `\`, `\\`)
	if want := "kubelet.exe (PID " + pid + ", runs " + quoted; !strings.Contains(log, want) || !strings.Contains(log, "not an installed one") {
		t.Errorf("the log does not name the ignored %q:\n%s", want, log)
	}

	for _, p := range []string{kubelet, dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := "kubelet.exe (PID " + pid + ") is running on this host (runs " + toWindowsPath(kubelet) + ", which only administrators may change)"
	log, ok = runUntil(t, 2*time.Minute, want, "--config", toWindowsPath(cfg))
	if !ok {
		t.Errorf("an administrator's kubelet.exe did not stop edgecore.exe:\n%s", log)
	}
}
