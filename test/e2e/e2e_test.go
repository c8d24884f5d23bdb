//go:build e2e

// Package e2e joins our edgecore to a real KubeEdge cloud on loopback:
// etcd, a kube-apiserver and upstream cloudcore built from the same module
// graph, with a fake container runtime on the edge. The Windows scenario
// runs edgecore.exe under Wine; the Linux one runs the Linux build. Run it
// with `make e2e`.
package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/test/fakecri"
)

func TestWindowsEdge(t *testing.T) { scenario(t, "windows") }

func TestLinuxEdge(t *testing.T) { scenario(t, "linux") }

// Generous bounds: they catch a node that never gets there, not a slow one.
const (
	readyBound = 3 * time.Minute
	podBound   = 3 * time.Minute
	outage     = 60 * time.Second
)

func scenario(t *testing.T, goos string) {
	c := startCluster(t)
	e := newEdge(t, c, goos)
	ctx := context.Background()

	e.startEdgecore(t)
	toReady := eventually(t, readyBound, "node "+e.name+" Ready", c.nodeReady(e.name, time.Time{}))
	t.Logf("node %s Ready %s after edgecore started", e.name, fmtDur(toReady))
	node, err := c.client.CoreV1().Nodes().Get(ctx, e.name, metav1.GetOptions{})
	if err != nil {
		fatal(t, err)
	}
	if got := node.Labels["kubernetes.io/os"]; got != goos {
		errorf(t, "node label kubernetes.io/os=%q, want %q", got, goos)
	}
	if _, ok := node.Labels["node-role.kubernetes.io/edge"]; !ok {
		errorf(t, "node has no node-role.kubernetes.io/edge label: %v", node.Labels)
	}
	t.Logf("node %s labels: kubernetes.io/os=%s, node-role.kubernetes.io/edge present", e.name, node.Labels["kubernetes.io/os"])
	fwd := c.forwardKubelet(t, e)

	// The pod range kube-controller-manager would allocate reaches the
	// node's own database, where `cni-config --mode l2bridge` without
	// --subnet reads it.
	cidr := "10.244.7.0/24"
	patch := []byte(`{"spec":{"podCIDR":"` + cidr + `","podCIDRs":["` + cidr + `"]}}`)
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, e.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		fatal(t, err)
	}
	inDB := eventually(t, readyBound, "the node's pod range in its database", func() (bool, error) {
		got, err := nodedb.PodCIDR(filepath.Join(e.dir, "edgecore.db"), e.name)
		return got == cidr, err
	})
	t.Logf("node %s: spec.podCIDR %s in the edge's database %s after it was set", e.name, cidr, fmtDur(inDB))

	// A pod for this OS reaches Running, and its deletion reaches the edge.
	podStart := e.createPod(t, c, "app-1")
	podLatency := eventually(t, podBound, "pod app-1 Running", c.podRunning("app-1"))
	t.Logf("pod app-1 Running %s after it was created (created at %s)", fmtDur(podLatency), podStart.Format(time.TimeOnly))
	if err := c.client.CoreV1().Pods("default").Delete(ctx, "app-1", metav1.DeleteOptions{}); err != nil {
		fatal(t, err)
	}
	eventually(t, podBound, "deletion of app-1 confirmed by the edge", func() (bool, error) {
		_, err := c.client.CoreV1().Pods("default").Get(ctx, "app-1", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	if !e.fakecri.logContains("StopPodSandbox") {
		errorl(t, "the edge never stopped the deleted pod's sandbox")
	}
	t.Log("pod app-1 deleted: the edge stopped it and the cloud removed it")

	e.createPod(t, c, "app-2")
	eventually(t, podBound, "pod app-2 Running", c.podRunning("app-2"))
	container := c.containerOf(t, "app-2")

	// An operator follows app-2's log through the tunnel when the cloud
	// goes away: the stream must end with an error, not hang.
	if _, _, err := c.exec(ctx, "app-2", []string{fakecri.CmdLog, "before", "the", "outage"}, nil, false); err != nil {
		fatalf(t, "exec into app-2 before the outage: %v", err)
	}
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	lines := c.follow(followCtx, t, "app-2")
	if l := nextLine(t, lines, time.Minute); l != "before the outage" {
		errorf(t, "logs --follow app-2: %q", l)
	}

	// Cloud outage: the edge keeps its pod running on its own.
	c.cloudcore.stop()
	t.Logf("cloudcore stopped for %v", outage)
	time.Sleep(outage)
	if e.edgecore.exited() {
		fatal(t, "edgecore ended while cloudcore was away")
	}
	// The API server ends its response when cloudStream's connection
	// goes, which client-go (and kubectl) read as the end of the log
	// (io.EOF) rather than as an error: what matters to the operator is
	// that the command returns instead of hanging.
	select {
	case f := <-lines:
		if f.err == nil {
			errorf(t, "logs --follow printed %q during the outage instead of ending", f.line)
		} else {
			t.Logf("logs --follow ended when cloudcore stopped: %v", f.err)
		}
	default:
		errorf(t, "logs --follow still open %v after cloudcore stopped", outage)
	}
	back := time.Now()
	answered := c.restartCloudcore(t)
	eventually(t, readyBound, "node Ready again after cloudcore came back", c.nodeReady(e.name, back))
	again := time.Since(answered)
	c.sameContainer(t, "app-2", container, "the cloud outage")
	e.createdOnce(t, 2, "the cloud outage")
	// The tunnel comes back with the hub: nothing to restart on the edge.
	tunnelBack := eventually(t, readyBound, "kubectl logs through the tunnel again", func() (bool, error) {
		got, err := c.logs("app-2", corev1.PodLogOptions{})
		return got == "before the outage\n", fmt.Errorf("%q, %v", got, err)
	})
	t.Logf("cloud outage of %v passed: pod kept running, node Ready again %s after cloudcore answered and logs through the tunnel %s after that",
		outage, fmtDur(again), fmtDur(tunnelBack))

	// Edge restart while the cloud is away: edgecore starts from its own
	// database and still knows its pod.
	peak := e.peakRSS()
	c.cloudcore.stop()
	e.edgecore.stop()
	e.startEdgecore(t)
	eventually(t, readyBound, "edgecore restarted without the cloud", func() (bool, error) {
		return e.edgecore.logContains("starting module edged"), nil
	})
	time.Sleep(20 * time.Second)
	if e.edgecore.exited() {
		fatal(t, "edgecore did not keep running without the cloud")
	}
	if known, err := e.knowsPod("app-2"); err != nil || !known {
		fatalf(t, "after the restart the edge's database does not hold pod app-2 (%v)", err)
	}
	back = time.Now()
	answered = c.restartCloudcore(t)
	eventually(t, readyBound, "node Ready after edge restart and cloud return", c.nodeReady(e.name, back))
	againRestarted := time.Since(answered)
	eventually(t, podBound, "pod app-2 still Running", c.podRunning("app-2"))
	c.sameContainer(t, "app-2", container, "the edge restart")
	e.createdOnce(t, 2, "the edge restart")
	t.Logf("edgecore restarted with cloudcore down: started from its database, pod app-2 still known and Running; node Ready again %s after cloudcore answered",
		fmtDur(againRestarted))

	// A crash with the cloud up: the process is killed and started again
	// at once, as the service manager does; the pod is left alone.
	e.edgecore.kill()
	restarted := time.Now()
	e.startEdgecore(t)
	eventually(t, readyBound, "node Ready after edgecore crashed and started again", c.nodeReady(e.name, restarted))
	againCrashed := time.Since(restarted)
	c.sameContainer(t, "app-2", container, "the crash")
	e.createdOnce(t, 2, "the crash")
	t.Logf("edgecore killed and started again: node Ready again %s after it started, pod app-2 in the same container", fmtDur(againCrashed))

	logsRTT, execRTT := c.streamChecks(t, e, fwd)

	fmt.Printf("e2e figures (%s edge): start to Ready %s; pod start latency %s; edgecore peak RSS %.0f MiB\n",
		goos, fmtDur(toReady), fmtDur(podLatency), peak)
	fmt.Printf("e2e figures (%s edge): through cloudcore's tunnel, kubectl logs %s and exec %s round trip\n",
		goos, fmtMs(logsRTT), fmtMs(execRTT))
	fmt.Printf("e2e figures (%s edge): after a %v cloud outage Ready again %s after cloudcore answered (%s when edgecore had restarted during the outage); after a crash Ready again %s after edgecore started\n",
		goos, outage, fmtDur(again), fmtDur(againRestarted), fmtDur(againCrashed))
}

// nodeReady holds when the node's Ready condition is true and, for a time
// after the zero time, the node has shown it is alive since then: the
// kubelet renews its Lease every few seconds, while an unchanged node status
// is only re-sent every few minutes.
func (c *cluster) nodeReady(name string, after time.Time) func() (bool, error) {
	return func() (bool, error) {
		ctx := context.Background()
		n, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				ready = cond.Status == corev1.ConditionTrue
			}
		}
		if !ready {
			return false, fmt.Errorf("node not Ready: %v", n.Status.Conditions)
		}
		if after.IsZero() {
			return true, nil
		}
		lease, err := c.client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.Time.After(after) {
			return false, fmt.Errorf("lease last renewed %v", lease.Spec.RenewTime)
		}
		return true, nil
	}
}

// containerOf is the ID of the pod's container and its restart count, as
// the edge reported them.
func (c *cluster) containerOf(t *testing.T, pod string) string {
	t.Helper()
	p, err := c.client.CoreV1().Pods("default").Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil || len(p.Status.ContainerStatuses) != 1 {
		fatalf(t, "pod %s: %v, %d container statuses", pod, err, len(p.Status.ContainerStatuses))
	}
	cs := p.Status.ContainerStatuses[0]
	return fmt.Sprintf("%s restarts=%d", cs.ContainerID, cs.RestartCount)
}

// sameContainer checks that the pod kept running through an event: had the
// edge stopped it, the kubelet would have started a new container.
func (c *cluster) sameContainer(t *testing.T, pod, before, event string) {
	t.Helper()
	var now string
	eventually(t, podBound, pod+" reported with its container after "+event, func() (bool, error) {
		now = c.containerOf(t, pod)
		return now == before, fmt.Errorf("container now %q, before %s %q", now, event, before)
	})
}

// createdOnce checks, in the fake runtime's call log, that the edge created
// one sandbox and one container per pod and nothing more: a pod stopped
// and started again would show up as a second RunPodSandbox.
func (e *edge) createdOnce(t *testing.T, pods int, event string) {
	t.Helper()
	data, err := os.ReadFile(e.fakecri.log)
	if err != nil {
		fatal(t, err)
	}
	for _, call := range []string{"RunPodSandbox", "CreateContainer"} {
		if n := strings.Count(string(data), call+"\n"); n != pods {
			errorf(t, "after %s the runtime saw %d %s calls for %d pods", event, n, call, pods)
		}
	}
}

func (c *cluster) podRunning(name string) func() (bool, error) {
	return func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodRunning, fmt.Errorf("phase %s", p.Status.Phase)
	}
}

// createPod asks for a pod for the edge's OS. There is no scheduler in the
// test cluster, so the pod names its node; the kubelet still checks the
// node selector against the node's labels before it admits the pod.
func (e *edge) createPod(t *testing.T, c *cluster, name string) time.Time {
	t.Helper()
	image := "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"
	command := []string{"sh", "-c", "sleep 3600"}
	if e.os == "windows" {
		image = "mcr.microsoft.com/windows/servercore:ltsc2022"
		command = []string{"cmd", "/c", "ping -t localhost"}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:     e.name,
			NodeSelector: map[string]string{"kubernetes.io/os": e.os},
			Containers:   []corev1.Container{{Name: "app", Image: image, Command: command, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	created := time.Now()
	if _, err := c.client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	return created
}

// knowsPod looks into the edge's own database for the pod.
func (e *edge) knowsPod(name string) (bool, error) {
	db, err := sql.Open("sqlite3", "file:"+e.dir+"/edgecore.db?mode=ro")
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT count(*) FROM meta WHERE key = ?", "default/pod/"+name).Scan(&n)
	return n > 0, err
}
