//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/test/fakecri"
)

// Bounds of the node shutdown scenario: generous, as everywhere here.
const (
	shutdownBound = 2 * time.Minute
	serviceBound  = 2 * time.Minute
)

// The pods of the scenario: one of normal priority and one of
// system-node-critical priority, each with a preStop exec hook.
const (
	regularPod  = "regular"
	criticalPod = "critical"
)

// TestWindowsNodeShutdown is a host shutdown of a joined Windows node, twice:
// the service (under Wine, installed by join with join's defaults) runs a
// pod of normal priority and one of system-node-critical priority. No
// client can send pre-shutdown through the service manager, so an
// administrator's pre-shutdown request (the event
// Global\preshutdown-<pid>, signalled by test/e2e/preshutdown) drives the
// same control through the same handler. Each time the kubelet must stop
// the pods in priority order with their grace periods and preStop hooks
// (the fake runtime's record) and the service must stop cleanly.
//
// With the cloud connected, the node reports that it is shutting down and
// each pod why it ended; after the host restarts the pods stay ended, as
// the kubelet leaves every pod a shutdown ended (on Linux too): the
// controllers that own pods replace them, here the test. With the cloud
// away, the pods are stopped the same way; after the restart the node runs
// them again from its own database, before the cloud is back, and their
// new statuses reach the cloud when it is.
func TestWindowsNodeShutdown(t *testing.T) {
	c := startCluster(t)
	h := newWinHost(t)
	preshutdown := mustEnv(t, "PRESHUTDOWN_EXE")
	ctx := context.Background()
	h.install(t, `C:\Program Files\edgecore`)
	cri := startHostCRI(t, h, "fakecri")

	r := h.edgecore(t, 6*time.Minute, "join", "--cloudcore-ipport", "127.0.0.1:"+strconv.Itoa(hubPort), "--token", c.token(t))
	if r.code != 0 {
		fatalf(t, "join: exit %d\n%s", r.code, r.out)
	}
	m := regexp.MustCompile(`Node (\S+) joined cloudcore at `).FindStringSubmatch(r.out)
	if m == nil {
		fatalf(t, "join did not say which node joined:\n%s", r.out)
	}
	name := m[1]
	layout := config.NewLayout(config.Host{GOOS: "windows"})
	logFile := h.drive(layout.LogFile)
	t.Cleanup(func() {
		if t.Failed() {
			dumpFile(t, "the service log", logFile)
		}
	})
	eventually(t, readyBound, "node "+name+" Ready", c.nodeReady(name, time.Time{}))
	st := h.edgecore(t, time.Minute, "service", "status").out
	if !strings.Contains(st, "a host shutdown waits up to 70s for it") {
		errorf(t, "service status does not show join's pre-shutdown time-out of 70s (30s of pods, then edgecore's stop):\n%s", st)
	}
	createShutdownPods(t, c, name)
	s := &shutdownHost{t: t, h: h, preshutdown: preshutdown, logFile: logFile}

	// 1. The cloud connected.
	first := s.shutDown(cri)
	var ready corev1.NodeCondition
	eventually(t, shutdownBound, "the node reported as shutting down", func() (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				ready = cond
			}
		}
		return ready.Status == corev1.ConditionFalse && strings.Contains(ready.Message, "node is shutting down"),
			fmt.Errorf("Ready %s: %s", ready.Status, ready.Message)
	})
	t.Logf("node %s: Ready %s, reason %s: %s", name, ready.Status, ready.Reason, ready.Message)
	for _, p := range []string{regularPod, criticalPod} {
		eventually(t, shutdownBound, "pod "+p+" reported as ended by the shutdown", c.endedByShutdown(p))
	}
	wantCreated(t, cri.log, "the first round", map[string]created{"default/" + regularPod: {1, 1}, "default/" + criticalPod: {1, 1}})
	var back time.Time
	logOffset := fileSize(logFile)
	cri, back = s.restartHost("fakecri-after-reboot")
	started := startedAt(t, logFile, logOffset)
	c.timeReady(t, name, started)
	firstReady := time.Since(back)
	// The kubelet syncs every pod it knows at once: the runtime is empty
	// and the pods ended, so there is nothing to look at; what it did is
	// in its relists of the runtime, 20 s of them.
	relistedFor(t, cri.log, started, 20*time.Second)
	for _, p := range []string{regularPod, criticalPod} {
		if ok, err := c.endedByShutdown(p)(); !ok {
			errorf(t, "after the host restart pod %s no longer says the shutdown ended it: %v", p, err)
		}
	}
	if n := strings.Count(readFrom(t, cri.log, 0), "RunPodSandbox\n"); n != 0 {
		errorf(t, "after the host restart the kubelet started %d pod sandboxes for pods the shutdown ended", n)
	}
	t.Log("after the host restart both pods stay ended by the shutdown, as the kubelet leaves them; the test replaces them, as their controllers would")
	for _, p := range []string{regularPod, criticalPod} {
		if err := c.client.CoreV1().Pods("default").Delete(ctx, p, metav1.DeleteOptions{}); err != nil {
			fatal(t, err)
		}
		eventually(t, podBound, "deletion of "+p+" confirmed by the edge", func() (bool, error) {
			_, err := c.client.CoreV1().Pods("default").Get(ctx, p, metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
	}
	createShutdownPods(t, c, name)
	before := map[string]string{}
	for _, p := range []string{regularPod, criticalPod} {
		before[p] = c.containerOf(t, p)
	}

	// 2. The cloud away: the same shutdown, and the pods back from the
	// node's database after the restart.
	secondRuntime := cri.log
	c.cloudcore.stop()
	second := s.shutDown(cri)
	wantCreated(t, secondRuntime, "the second round", map[string]created{"default/" + regularPod: {1, 1}, "default/" + criticalPod: {1, 1}})
	logOffset = fileSize(logFile)
	cri, back = s.restartHost("fakecri-after-second-reboot")
	started = startedAt(t, logFile, logOffset)
	eventually(t, podBound, "both pods started again from the node's database, without the cloud", func() (bool, error) {
		n := strings.Count(readFrom(t, cri.log, 0), "StartContainer\n")
		return n >= 2, fmt.Errorf("%d containers started", n)
	})
	fromDB := time.Since(back)
	cloudBack := c.restartCloudcore(t)
	c.timeReady(t, name, cloudBack)
	for _, p := range []string{regularPod, criticalPod} {
		// The runtime restarted with the host, empty: the kubelet of the
		// new process created each pod anew there, and the cloud shows
		// that container.
		id := c.startedAnew(t, cri.log, p, started, "the host restart")
		if id == runtimeID(before[p]) {
			errorf(t, "pod %s runs in container %s, the one from before the shutdown", p, id)
		}
	}
	statusBack := time.Since(cloudBack)
	wantCreated(t, cri.log, "the restart after the second round", map[string]created{"default/" + regularPod: {1, 1}, "default/" + criticalPod: {1, 1}})

	fmt.Printf("node shutdown figures (windows edge under Wine), cloud connected: pre-shutdown request to service stopped %s, "+
		"critical pod stopped %s after the regular one; node Ready %s after the host restart, pods left ended\n",
		fmtDur(first.stopped), fmtDur(first.gap), fmtDur(firstReady))
	fmt.Printf("node shutdown figures (windows edge under Wine), cloud away: pre-shutdown request to service stopped %s, "+
		"critical pod stopped %s after the regular one; pods started from the node's database %s after the host restart, "+
		"Running in the cloud %s after cloudcore came back\n",
		fmtDur(second.stopped), fmtDur(second.gap), fmtDur(fromDB), fmtDur(statusBack))
}

// shutdownHost drives host shutdowns of the Windows host h.
type shutdownHost struct {
	t           *testing.T
	h           *winHost
	preshutdown string
	logFile     string
}

// shutdownRun is what one shutdown took: from the pre-shutdown request to
// the service stopped, and from the regular pod's stop to the critical
// pod's, as the fake runtime saw them.
type shutdownRun struct {
	stopped, gap time.Duration
}

// shutDown asks the running service for a host shutdown and checks that
// it stopped cleanly after the kubelet had stopped the pods, in order,
// with their hooks and grace periods (cri's record).
func (s *shutdownHost) shutDown(cri *proc) shutdownRun {
	t, h := s.t, s.h
	t.Helper()
	pid := servicePID(t, h)
	criOffset, logOffset := fileSize(cri.log), fileSize(s.logFile)
	begin := time.Now()
	if r := h.run(t, time.Minute, s.preshutdown, strconv.Itoa(pid)); r.code != 0 {
		fatalf(t, "preshutdown.exe %d: exit %d\n%s", pid, r.code, r.out)
	}
	var status string
	eventually(t, serviceBound, "the service stopped after the pre-shutdown request", func() (bool, error) {
		status = h.edgecore(t, time.Minute, "service", "status").out
		return strings.Contains(status, "installed, stopped"), fmt.Errorf("%s", strings.TrimSpace(status))
	})
	run := shutdownRun{stopped: time.Since(begin)}
	if strings.Contains(status, "last") {
		errorf(t, "the service did not stop cleanly after the pre-shutdown request: %s", status)
	}
	serviceLog := readFrom(t, s.logFile, logOffset)
	for _, want := range []string{"An administrator signalled the pre-shutdown event", "Host shutdown: stopping the node's pods by priority",
		"Host shutdown: the node's pods are stopped", "edgecore stopped"} {
		if !strings.Contains(serviceLog, want) {
			errorf(t, "the service log of the shutdown lacks %q", want)
		}
	}
	// The regular pod's preStop hook, then its stop with its group's
	// 20 s (30 s less the critical pods' 10 s), which its container uses
	// 6 s of before it exits by itself; only then the critical pod's hook
	// and stop with 10 s, of which it uses 3 s. The kubelet runs an exec
	// hook without a runtime time limit (timeout 0) and bounds it by the
	// grace period itself. A group's deadline shorter than what its
	// container takes would show as Killed (or as a stop the node gave up
	// on, Abandoned), and a group not waited for as the critical pod's
	// hook before the regular container exited.
	acts := runtimeActions(t, readFrom(t, cri.log, criOffset))
	want := []string{
		`ExecSync pod=default/regular container=app timeout=0s command="log preStop regular"`,
		`StopContainer pod=default/regular container=app timeout=20s`,
		fmt.Sprintf(`Exited pod=default/regular container=app code=1 after=%s`, stopTakes[regularPod]),
		`ExecSync pod=default/critical container=app timeout=0s command="log preStop critical"`,
		`StopContainer pod=default/critical container=app timeout=10s`,
		fmt.Sprintf(`Exited pod=default/critical container=app code=1 after=%s`, stopTakes[criticalPod]),
	}
	var got []string
	for _, a := range acts {
		got = append(got, a.text)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		fatalf(t, "the runtime saw, in order:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if waited := acts[3].at.Sub(acts[1].at); waited < stopTakes[regularPod] {
		fatalf(t, "the critical group began %s after the regular pod's stop, before its container had exited (%s)", fmtDur(waited), stopTakes[regularPod])
	}
	run.gap = acts[4].at.Sub(acts[1].at)
	t.Logf("runtime: %s", strings.Join(got, "; "))
	return run
}

// restartHost restarts the host with a runtime that starts empty, as after
// a reboot, and waits for the automatic service to run. It returns the
// runtime and when the host restarted.
func (s *shutdownHost) restartHost(criName string) (*proc, time.Time) {
	t := s.t
	t.Helper()
	s.h.restart(t)
	began := time.Now()
	cri := startHostCRI(t, s.h, criName)
	eventually(t, recoverBoundShutdown, "the service running after the host restart", func() (bool, error) {
		out := s.h.edgecore(t, time.Minute, "service", "status").out
		return strings.Contains(out, "installed, running"), fmt.Errorf("%s", strings.TrimSpace(out))
	})
	return cri, began
}

// createShutdownPods creates the scenario's two pods and waits for them to
// run.
func createShutdownPods(t *testing.T, c *cluster, node string) {
	t.Helper()
	createShutdownPod(t, c, node, regularPod, "")
	createShutdownPod(t, c, node, criticalPod, "system-node-critical")
	for _, p := range []string{regularPod, criticalPod} {
		eventually(t, podBound, "pod "+p+" Running", c.podRunning(p))
	}
}

// endedByShutdown holds when the cloud's pod says, as the kubelet writes
// it, that a node shutdown ended it.
func (c *cluster) endedByShutdown(name string) func() (bool, error) {
	return func() (bool, error) {
		pod, err := c.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		disruption := false
		for _, cond := range pod.Status.Conditions {
			if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue && cond.Reason == corev1.PodReasonTerminationByKubelet {
				disruption = true
			}
		}
		return pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == "Terminated" &&
				strings.Contains(pod.Status.Message, "imminent node shutdown") && disruption,
			fmt.Errorf("phase %s, reason %q, message %q, DisruptionTarget by the kubelet %v", pod.Status.Phase, pod.Status.Reason, pod.Status.Message, disruption)
	}
}

// recoverBoundShutdown bounds the service's own start after the host
// restart.
const recoverBoundShutdown = 2 * time.Minute

// stopTakes is how long each pod's container takes to exit after its stop
// signal (fakecri's `onstop 1 DURATION`): less than its group's grace
// period, so that the node must wait that long for it.
var stopTakes = map[string]time.Duration{regularPod: 6 * time.Second, criticalPod: 3 * time.Second}

// createShutdownPod asks for a pod of the node with a preStop exec hook
// that prints to the container's log through the fake runtime, a
// container that exits 1 when stopped after stopTakes, and the priority
// class given ("" for the default, 0).
func createShutdownPod(t *testing.T, c *cluster, node, name, priorityClass string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:          node,
			NodeSelector:      map[string]string{"kubernetes.io/os": "windows"},
			PriorityClassName: priorityClass,
			Containers: []corev1.Container{{
				Name: "app", Image: "mcr.microsoft.com/windows/servercore:ltsc2022", ImagePullPolicy: corev1.PullIfNotPresent,
				// Ended by its stop signal, as most processes are. One
				// that exits 0 on it ends Succeeded, and the kubelet
				// (on Linux too) then reports no shutdown reason.
				Command: []string{fakecri.CmdOnStop, "1", stopTakes[name].String()},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					Exec: &corev1.ExecAction{Command: []string{fakecri.CmdLog, "preStop", name}},
				}},
			}},
		},
	}
	if _, err := c.client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		fatalf(t, "create pod %s: %v", name, err)
	}
}

// startHostCRI runs the fake runtime on containerd's pipe in the Wine
// host h, with its files where containerd keeps them.
func startHostCRI(t *testing.T, h *winHost, name string) *proc {
	t.Helper()
	p := start(t, h.logDir, name, h.env, h.wine, mustEnv(t, "FAKECRI_EXE"),
		"--endpoint", fakecri.DefaultEndpoint, "-v", "--image-fs-dir", `C:\ProgramData\containerd\root`)
	eventually(t, time.Minute, name+" serving", func() (bool, error) { return p.logContains("serving"), nil })
	return p
}

var runningPIDLine = regexp.MustCompile(`installed, running \(process (\d+)\)`)

// servicePID is the running service's process, from `service status`.
func servicePID(t *testing.T, h *winHost) int {
	t.Helper()
	out := h.edgecore(t, time.Minute, "service", "status").out
	m := runningPIDLine.FindStringSubmatch(out)
	if m == nil {
		fatalf(t, "the service is not running: %s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// runtimeAction is one "action:" line of `fakecri -v`, with its time.
type runtimeAction struct {
	at   time.Time
	text string
}

var actionLine = regexp.MustCompile(`(?m)^fakecri: (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6}) action: (.+?)\r?$`)

func runtimeActions(t *testing.T, log string) []runtimeAction {
	t.Helper()
	var out []runtimeAction
	for _, m := range actionLine.FindAllStringSubmatch(log, -1) {
		at, err := time.Parse("2006/01/02 15:04:05.000000", m[1])
		if err != nil {
			fatal(t, err)
		}
		out = append(out, runtimeAction{at: at, text: m[2]})
	}
	return out
}

// readFrom is the file's text from offset on.
func readFrom(t *testing.T, path string, offset int64) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		fatal(t, err)
	}
	return string(data[min(int(offset), len(data)):])
}

// dumpFile prints the end of a file into the test output.
func dumpFile(t *testing.T, what, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Logf("no %s: %v", what, err)
		return
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 150 {
		lines = lines[len(lines)-150:]
	}
	t.Logf("---- last lines of %s (%s) ----\n%s", what, path, strings.Join(lines, "\n"))
}
