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
	"maps"
	"os"
	"path/filepath"
	"regexp"
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

	// Cloud outage: the edge keeps its pod running on its own, while the
	// cloud does what Kubernetes does with a node whose heartbeats
	// stopped: the node lifecycle controller marks it Ready=Unknown and
	// its pod not ready.
	c.cloudcore.stop()
	stopped := time.Now()
	t.Logf("cloudcore stopped for %v", outage)
	unknown := c.wentUnknown(t, e.name, "cloudcore stopped")
	eventually(t, outage, "pod app-2 marked not ready by the node lifecycle controller", c.podReady("app-2", false))
	time.Sleep(time.Until(stopped.Add(outage)))
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
	cloudStarted := c.restartCloudcore(t)
	again := c.readyAgain(t, e.name, cloudStarted, c.hubAnswered, "cloudcore started after the outage")
	// The pod was marked not ready by the cloud: ready again is the
	// kubelet's own report, made after the cloud came back.
	eventually(t, podBound, "pod app-2 ready again after the outage", c.podReady("app-2", true))
	c.sameContainer(t, "app-2", container, "the cloud outage")
	e.createdOnce(t, 2, "the cloud outage")
	// The tunnel comes back with the hub: nothing to restart on the edge.
	tunnelBack := eventually(t, readyBound, "kubectl logs through the tunnel again", func() (bool, error) {
		got, err := c.logs("app-2", corev1.PodLogOptions{})
		return got == "before the outage\n", fmt.Errorf("%q, %v", got, err)
	})
	t.Logf("cloud outage of %v passed: node Ready=Unknown %s after cloudcore stopped, pod kept running, node Ready again %s after cloudcore started and logs through the tunnel %s after that",
		outage, fmtDur(unknown), fmtDur(again), fmtDur(tunnelBack))

	// Edge restart while the cloud is away: edgecore starts from its own
	// database, still knows its pod, and its kubelet finds the pod's
	// container in the runtime and leaves it there.
	peak := e.peakRSS()
	c.cloudcore.stop()
	e.edgecore.stop()
	e.startEdgecore(t)
	restarted := e.edgecore.started
	eventually(t, readyBound, "edgecore restarted without the cloud", func() (bool, error) {
		return e.edgecore.logContains("starting module edged"), nil
	})
	keptRunning(t, e.fakecri.log, "app-2", container, restarted, "the edge restart")
	if known, err := e.knowsPod("app-2"); err != nil || !known {
		fatalf(t, "after the restart the edge's database does not hold pod app-2 (%v)", err)
	}
	c.wentUnknown(t, e.name, "cloudcore stopped again")
	if e.edgecore.exited() {
		fatal(t, "edgecore did not keep running without the cloud")
	}
	cloudStarted = c.restartCloudcore(t)
	againRestarted := c.readyAgain(t, e.name, cloudStarted, c.hubAnswered, "cloudcore started after the edge restarted without it")
	eventually(t, podBound, "pod app-2 ready again after the edge restart", c.podReady("app-2", true))
	c.sameContainer(t, "app-2", container, "the edge restart")
	e.createdOnce(t, 2, "the edge restart")
	t.Logf("edgecore restarted with cloudcore down: started from its database, pod app-2 still known and in its container; node Ready again %s after cloudcore started",
		fmtDur(againRestarted))

	// A crash with the cloud up: the process is killed and started again
	// at once, as the service manager does; the pod is left alone. The
	// new process starts in a later second than the killed one's last
	// report, so that a heartbeat of the new one (the API keeps whole
	// seconds) cannot be the old one's.
	e.edgecore.kill()
	nextSecond()
	e.startEdgecore(t)
	restarted = e.edgecore.started
	againCrashed := c.readyAgain(t, e.name, restarted, restarted, "edgecore started after the crash")
	keptRunning(t, e.fakecri.log, "app-2", container, restarted, "the crash")
	c.sameContainer(t, "app-2", container, "the crash")
	e.createdOnce(t, 2, "the crash")
	t.Logf("edgecore killed and started again: node Ready again %s after it started, pod app-2 in the same container", fmtDur(againCrashed))

	logsRTT, execRTT := c.streamChecks(t, e, fwd)

	// Over the whole scenario: one sandbox and one start per pod, but
	// the shell pod's second start (its container ended and was
	// restarted on purpose). A pod restarted behind any check above
	// would add to these.
	wantCreated(t, e.fakecri.log, "the scenario", map[string]created{
		"default/app-1": {1, 1}, "default/app-2": {1, 1}, "default/shell": {1, 2},
	})

	fmt.Printf("e2e figures (%s edge): start to Ready %s; pod start latency %s; edgecore peak RSS %.0f MiB\n",
		goos, fmtDur(toReady), fmtDur(podLatency), peak)
	fmt.Printf("e2e figures (%s edge): through cloudcore's tunnel, kubectl logs %s and exec %s round trip\n",
		goos, fmtMs(logsRTT), fmtMs(execRTT))
	fmt.Printf("e2e figures (%s edge): Ready=True again (after Ready=Unknown) %s after cloudcore started following a %v outage (%s when edgecore had restarted during the outage); after a crash Ready again %s after edgecore started\n",
		goos, fmtDur(again), outage, fmtDur(againRestarted), fmtDur(againCrashed))
}

// The bounds of a node's return after an outage or a crash. They are
// correctness bounds, not speed targets (`make bench-recovery` measures the
// figures), and each is counted from what the node can act on, so that
// cloudcore's own start-up on a loaded machine does not count against it:
//
//   - reconnectBound, from when the node can connect (cloudcore's hub
//     answers; a new edgecore process starts) to its Lease renewed, which
//     edgecore does the moment its hub connects: the reconnection policy
//     (internal/reconnect) tries at most 1.5 s apart. Upstream's edgeHub
//     waits two heartbeats (30 s) after a broken connection, then tries
//     5 s apart; a node that went back to that breaks this bound.
//   - statusBound, from that renewal to Ready=True with a heartbeat of the
//     kubelet: it sends the node's status at its next sync, every
//     nodeStatusUpdateFrequency (10 s), and the first sync after the
//     connection may come before the cloud's copy of the node
//     (Ready=Unknown) has reached the edge, when the kubelet sees nothing
//     to report; the status then goes through cloudcore, which takes
//     seconds on a loaded 2-core machine.
const (
	reconnectBound = 10 * time.Second
	statusBound    = 30 * time.Second
)

// readyAgain waits until the node is Ready with a heartbeat sent after
// from, the start of the process that brings it back (cloudcore after an
// outage, edgecore after a crash), and returns how long after from that
// was seen. connectable is when the node could connect again (the hub
// answered, or the new process started). It fails the test if the node
// reconnected (renewed its Lease) more than reconnectBound after
// connectable, or was Ready more than statusBound after that.
func (c *cluster) readyAgain(t *testing.T, name string, from, connectable time.Time, what string) time.Duration {
	t.Helper()
	took, lease, seen := c.timeReady(t, name, from)
	t.Logf("node %s after %s: connectable %s, Lease renewed %s, Ready with a heartbeat %s after it; Ready seen: %s", name, what,
		fmtDur(connectable.Sub(from)), fmtDur(lease), fmtDur(took), strings.Join(seen, ", "))
	renewed := from.Add(lease)
	switch {
	case lease == 0:
		errorf(t, "node %s Ready again after %s, but its Lease not renewed since: edgecore renews it the moment its hub connects", name, what)
	case renewed.Sub(connectable) > reconnectBound:
		errorf(t, "node %s renewed its Lease %s after it could connect again (%s): more than %v, the bound of a node that reconnects at once",
			name, fmtDur(renewed.Sub(connectable)), what, reconnectBound)
	case from.Add(took).Sub(renewed) > statusBound:
		errorf(t, "node %s Ready again %s after it renewed its Lease (%s): more than %v, two of the kubelet's status periods and the way through cloudcore",
			name, fmtDur(from.Add(took).Sub(renewed)), what, statusBound)
	}
	return took
}

// timeReady waits, for up to readyBound, until the node is Ready with a
// heartbeat of the process started at from (untilReady), and returns how
// long after from that was first seen, how long after from its Lease was
// first renewed (polled up to reconnectBound more if not by then; 0 if
// not at all), and each Ready condition seen on the way: how the node got
// there. It is the check of every scenario after an event that replaced
// the edgecore process (a crash, a restart, an upgrade, a rollback, a
// configuration applied), from the new process's start: nodeReady with
// that start alone can be met by the old process's status.
func (c *cluster) timeReady(t *testing.T, name string, from time.Time) (ready, lease time.Duration, seen []string) {
	t.Helper()
	ready, lease, seen, err := c.untilReady(name, readyWait{from: from, until: time.Now().Add(readyBound)})
	if err != nil {
		fatalf(t, "node %s not Ready with a heartbeat of its new process (started %s) within %v: %v; seen %s", name, from.Format(time.TimeOnly), readyBound, err, strings.Join(seen, ", "))
	}
	for end := time.Now().Add(reconnectBound); lease == 0 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		lease = c.leaseRenewed(name, from)
	}
	return ready, lease, seen
}

// readyWait is what untilReady waits for.
type readyWait struct {
	// from: the node's heartbeat must have been sent since then (the
	// start of the process that brings it back, or the end of a fault).
	from time.Time
	// until: when the wait gives up.
	until time.Time
	// struck, when not zero, is when a fault began: a node whose Ready
	// condition stayed True since before then (a fault shorter than the
	// node lifecycle controller's grace period) has no new status to
	// send, since the kubelet writes an unchanged status only every
	// nodeStatusReportFrequency (5 min); its heartbeat is the Lease,
	// renewed since from.
	struck time.Time
	// ended, when not nil, tells that the node will not get there (its
	// process ended by itself): the wait stops.
	ended func() bool
}

// untilReady is the one rule of "Ready again with a heartbeat after from":
// it polls the cloud every 50 ms until the node is Ready with a heartbeat
// sent since from (readyAfter) in a write to the node that is not the
// first one it saw, unless the node's Lease had been renewed since from by
// then (or, with w.struck, the node stayed Ready through the fault and its
// Lease was renewed since from). It returns how long after from that was
// first seen, how long after from the Lease was renewed by then (0 if
// not), and each Ready condition seen on the way (status and heartbeat,
// and when it was seen); or, when w.until passed or w.ended said so, why
// the node was not Ready as far as seen.
//
// The first write seen does not count alone because a heartbeat does not
// say which process sent it: cloudcore stamps a heartbeat of its own (its
// clock, now) on a node status older than its nodeUpdateFrequency (10 s),
// so a status of the process a crash ended that cloudcore handled late
// reads as sent after from. A renewal since from is the new process's
// (edgecore renews the Lease the moment its hub connects; the reference's
// kubelet on its own period, which is why it is not required).
func (c *cluster) untilReady(name string, w readyWait) (ready, lease time.Duration, seen []string, err error) {
	ctx := context.Background()
	last, lastVersion, writes := "", "", 0
	err = fmt.Errorf("not looked at before %s", w.until.Format("15:04:05.000"))
	for ; time.Now().Before(w.until); time.Sleep(50 * time.Millisecond) {
		if w.ended != nil && w.ended() {
			break
		}
		if lease == 0 {
			lease = c.leaseRenewed(name, w.from)
		}
		n, gerr := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if gerr != nil {
			err = gerr
			continue
		}
		if !w.struck.IsZero() {
			if cond, cerr := readyConditionOf(n); cerr == nil && cond.Status == corev1.ConditionTrue &&
				cond.LastTransitionTime.Time.Before(w.struck.Truncate(time.Second)) {
				if lease != 0 {
					return time.Since(w.from), lease, seen, nil
				}
				err = fmt.Errorf("Ready throughout, the Lease not renewed since %s", w.from.Format("15:04:05.000"))
				continue
			}
		}
		if n.ResourceVersion == lastVersion {
			continue
		}
		writes++
		lastVersion = n.ResourceVersion
		if cond, cerr := readyConditionOf(n); cerr == nil {
			if now := fmt.Sprintf("%s (heartbeat %s)", cond.Status, cond.LastHeartbeatTime.Format(time.TimeOnly)); now != last {
				seen = append(seen, fmt.Sprintf("%s at %s", now, fmtDur(time.Since(w.from))))
				last = now
			}
		}
		var ok bool
		if ok, err = readyAfter(n, w.from); ok && (writes > 1 || lease != 0) {
			return time.Since(w.from), lease, seen, nil
		} else if ok {
			err = fmt.Errorf("Ready with a heartbeat since %s already when first seen, and the Lease not renewed since then", w.from.Format("15:04:05.000"))
		}
	}
	return 0, lease, seen, err
}

// leaseRenewed is how long after from the node's Lease was last renewed,
// or 0 when it was not renewed since from.
func (c *cluster) leaseRenewed(name string, from time.Time) time.Duration {
	l, err := c.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
	if err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(from) {
		return l.Spec.RenewTime.Sub(from)
	}
	return 0
}

// wentUnknown waits until the node lifecycle controller has marked the node
// Ready=Unknown (its heartbeats stopped nodeGrace ago), and returns how
// long that took from when the wait began.
func (c *cluster) wentUnknown(t *testing.T, name, since string) time.Duration {
	t.Helper()
	return eventually(t, nodeGrace+time.Minute, "node "+name+" Ready=Unknown after "+since, func() (bool, error) {
		ready, err := c.readyCondition(name)
		if err != nil {
			return false, err
		}
		return ready.Status == corev1.ConditionUnknown, fmt.Errorf("Ready %s: %s", ready.Status, ready.Message)
	})
}

// readyCondition is the node's Ready condition as the cloud has it.
func (c *cluster) readyCondition(name string) (corev1.NodeCondition, error) {
	n, err := c.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return corev1.NodeCondition{}, err
	}
	return readyConditionOf(n)
}

// readyConditionOf is node n's Ready condition.
func readyConditionOf(n *corev1.Node) (corev1.NodeCondition, error) {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond, nil
		}
	}
	return corev1.NodeCondition{}, fmt.Errorf("node %s has no Ready condition: %v", n.Name, n.Status.Conditions)
}

// nodeReady holds when the node's Ready condition is True and, for an
// after other than the zero time, the kubelet has sent it since then (after
// an event that replaced the edgecore process, timeReady, which also tells
// the new process's status from an old one cloudcore stamped late): the
// condition's lastHeartbeatTime, which the kubelet sets in every status it
// sends, is not before after. That is what Kubernetes reads; the Lease,
// which edgecore renews the moment its hub connects, says that the process
// is alive, not that the node is Ready, and the node lifecycle controller
// never sets Ready=True itself. The API keeps whole seconds, so a status
// sent in the second after falls in counts: callers take after from the
// start of the process whose report they wait for, by when the one before
// it had stopped.
func (c *cluster) nodeReady(name string, after time.Time) func() (bool, error) {
	return func() (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return readyAfter(n, after)
	}
}

// readyAfter holds when node n is Ready with a heartbeat not before after
// (see nodeReady).
func readyAfter(n *corev1.Node, after time.Time) (bool, error) {
	ready, err := readyConditionOf(n)
	if err != nil {
		return false, err
	}
	if ready.Status != corev1.ConditionTrue {
		return false, fmt.Errorf("node not Ready: %s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	if hb := ready.LastHeartbeatTime.Time; hb.Before(after.Truncate(time.Second)) {
		return false, fmt.Errorf("Ready, last heartbeat %s, before %s", hb.Format(time.TimeOnly), after.Format("15:04:05.000"))
	}
	return true, nil
}

// podReady holds when the pod's Ready condition is as wanted: the kubelet
// sets it, and the node lifecycle controller sets it False for the pods of
// a node it marks Ready=Unknown.
func (c *cluster) podReady(name string, want bool) func() (bool, error) {
	return func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				return (cond.Status == corev1.ConditionTrue) == want, fmt.Errorf("Ready %s (%s)", cond.Status, cond.Reason)
			}
		}
		return false, fmt.Errorf("pod %s has no Ready condition", name)
	}
}

// nextSecond waits for the wall clock's next whole second: a process
// started then reports heartbeats (whole seconds) later than any of a
// process that ended before.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second).Sub(now))
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

// runsContainer holds when the cloud shows the pod Running in the
// container with the runtime ID id.
func (c *cluster) runsContainer(pod, id string) func() (bool, error) {
	return func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(context.Background(), pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if len(p.Status.ContainerStatuses) != 1 {
			return false, fmt.Errorf("phase %s, %d container statuses", p.Status.Phase, len(p.Status.ContainerStatuses))
		}
		cs := p.Status.ContainerStatuses[0]
		return p.Status.Phase == corev1.PodRunning && cs.State.Running != nil && runtimeID(cs.ContainerID) == id,
			fmt.Errorf("phase %s, container %s running %v, want container %s", p.Status.Phase, cs.ContainerID, cs.State.Running != nil, id)
	}
}

// runtimeID is the runtime's own ID of a container the cloud reports as
// RUNTIME://ID (with containerOf's restart count after it, if any).
func runtimeID(reported string) string {
	id, _, _ := strings.Cut(reported, " ")
	if _, after, ok := strings.Cut(id, "://"); ok {
		return after
	}
	return id
}

// The fake runtime's record (`fakecri -v`): a line for each CRI call, and
// a "pod call:" line for each call on a pod's sandbox or container
// (fakecri.PodCall), every line with its local time to the microsecond.
// It is what the kubelet did, not what the edge last reported: a check
// after an event reads it from the start of the process the event began.

// criCall is one line of the record: a call (method) or a pod call.
type criCall struct {
	at     time.Time
	method string
	pod    *podCall
}

// podCall is fakecri.PodCall as the record shows it.
type podCall struct {
	call, pod, sandbox, container, id string
}

func (c podCall) String() string {
	if c.sandbox != "" {
		return fmt.Sprintf("%s of pod %s (sandbox %.12s)", c.call, c.pod, c.sandbox)
	}
	return fmt.Sprintf("%s of pod %s (container %s %.12s)", c.call, c.pod, c.container, c.id)
}

var (
	criLine     = regexp.MustCompile(`^fakecri: (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6}) (.*?)\r?$`)
	podCallText = regexp.MustCompile(`^pod call: (\S+) pod=(\S+) (?:sandbox=(\S+)|container=(\S+) id=(\S+))$`)
)

// criCalls reads the record of the runtime whose log is at path: the calls
// from after on (the zero time: all), in order. Failed calls and actions
// are left out.
func criCalls(t *testing.T, path string, after time.Time) []criCall {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		fatal(t, err)
	}
	var calls []criCall
	for _, line := range strings.Split(string(data), "\n") {
		m := criLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation("2006/01/02 15:04:05.000000", m[1], time.Local)
		if err != nil {
			fatal(t, err)
		}
		if at.After(time.Now().Add(time.Minute)) {
			fatalf(t, "the runtime's record %s has a call at %s, in the future: does Wine's clock use another time zone than %s?", path, at, time.Local)
		}
		if at.Before(after) {
			continue
		}
		c := criCall{at: at}
		if p := podCallText.FindStringSubmatch(m[2]); p != nil {
			c.pod = &podCall{call: p[1], pod: p[2], sandbox: p[3], container: p[4], id: p[5]}
		} else if strings.HasPrefix(m[2], "/") && !strings.Contains(m[2], " ") {
			c.method = m[2][strings.LastIndex(m[2], "/")+1:]
		} else {
			continue
		}
		calls = append(calls, c)
	}
	return calls
}

// resynced waits until the kubelet of the process that started at after
// has synced the pod (in namespace default) with the runtime whose record
// is at criLog, and returns the pod's calls since after. A new kubelet
// reads the status of every pod's sandbox it finds in the runtime (its
// PodSandboxStatus) before it syncs the pod, and again after it created
// one; the wait ends at its relist (ListPodSandbox) a second or more after
// that, by when it has acted on what it found. Only then does counting
// what it created mean anything.
func resynced(t *testing.T, criLog, pod string, after time.Time) []podCall {
	t.Helper()
	pod = "default/" + pod
	var calls []podCall
	eventually(t, podBound, "the kubelet started at "+after.Format("15:04:05.000")+" synced pod "+pod+" with the runtime", func() (bool, error) {
		calls = nil
		var looked time.Time
		relisted := false
		for _, c := range criCalls(t, criLog, after) {
			switch {
			case c.pod != nil && c.pod.pod == pod:
				calls = append(calls, *c.pod)
				if looked.IsZero() && c.pod.call == "PodSandboxStatus" {
					looked = c.at
				}
			case c.method == "ListPodSandbox" && !looked.IsZero() && c.at.Sub(looked) >= time.Second:
				relisted = true
			}
		}
		return relisted, fmt.Errorf("sandbox looked at: %v; relisted a second after that: %v", !looked.IsZero(), relisted)
	})
	return calls
}

// relistedFor waits until the kubelet of the process that started at
// after has listed the sandboxes of the runtime whose record is at criLog
// (its relist, every second) for d: the evidence that it has been at work
// when what it must do is nothing (pods that already ended, say).
func relistedFor(t *testing.T, criLog string, after time.Time, d time.Duration) {
	t.Helper()
	eventually(t, d+podBound, fmt.Sprintf("the kubelet started at %s relisting the runtime for %v", after.Format("15:04:05.000"), d), func() (bool, error) {
		var first, last time.Time
		for _, c := range criCalls(t, criLog, after) {
			if c.method == "ListPodSandbox" {
				if first.IsZero() {
					first = c.at
				}
				last = c.at
			}
		}
		return !first.IsZero() && last.Sub(first) >= d, fmt.Errorf("relisted from %s to %s", first.Format(time.TimeOnly), last.Format(time.TimeOnly))
	})
}

// keptRunning checks, in the runtime's record, that the pod went through
// an event in the container it had before (containerOf's): the kubelet of
// the process that started at after found that container (its
// ContainerStatus) and neither created a sandbox nor created, started or
// stopped a container for the pod, nor stopped its sandbox.
func keptRunning(t *testing.T, criLog, pod, before string, after time.Time, event string) {
	t.Helper()
	id := runtimeID(before)
	found := false
	for _, c := range resynced(t, criLog, pod, after) {
		switch c.call {
		case "ContainerStatus":
			found = found || c.id == id
		case "RunPodSandbox", "StopPodSandbox", "CreateContainer", "StartContainer", "StopContainer":
			errorf(t, "after %s the kubelet made a %s", event, c)
		}
	}
	if !found {
		errorf(t, "after %s the kubelet synced pod %s without looking at its container %.12s", event, pod, id)
	}
}

// startedAnew checks, in the record of the runtime at criLog, that the
// kubelet of the process that started at after ran the pod anew there (one
// sandbox created, one container started), and then that the cloud shows
// the pod Running in that container. It returns the container's ID.
func (c *cluster) startedAnew(t *testing.T, criLog, pod string, after time.Time, event string) string {
	t.Helper()
	sandboxes, id := 0, ""
	for _, call := range resynced(t, criLog, pod, after) {
		switch call.call {
		case "RunPodSandbox":
			sandboxes++
		case "StartContainer":
			id = call.id
		}
	}
	if sandboxes != 1 || id == "" {
		fatalf(t, "after %s the kubelet created %d sandboxes for pod %s and started container %q, want one of each", event, sandboxes, pod, id)
	}
	eventually(t, podBound, "pod "+pod+" Running in the container started after "+event, c.runsContainer(pod, id))
	return id
}

// created is what the runtime did for one pod: sandboxes created and
// containers started.
type created struct{ sandboxes, starts int }

// wantCreated checks the whole record of the runtime at criLog: each pod
// of want had exactly its sandboxes and container starts, and no other pod
// had any. A pod stopped and started again behind a check shows here.
func wantCreated(t *testing.T, criLog, what string, want map[string]created) {
	t.Helper()
	got := map[string]created{}
	for _, c := range criCalls(t, criLog, time.Time{}) {
		if c.pod == nil {
			continue
		}
		n := got[c.pod.pod]
		switch c.pod.call {
		case "RunPodSandbox":
			n.sandboxes++
		case "StartContainer":
			n.starts++
		default:
			continue
		}
		got[c.pod.pod] = n
	}
	if !maps.Equal(got, want) {
		errorf(t, "over %s the runtime created sandboxes and started containers %v; want %v (pod: {sandboxes starts})", what, got, want)
		return
	}
	t.Logf("over %s the runtime created sandboxes and started containers as expected: %v", what, got)
}

// createdOnce checks, in the fake runtime's record, that the edge created
// one sandbox and one container per pod and nothing more: a pod stopped
// and started again would show up as a second RunPodSandbox.
func (e *edge) createdOnce(t *testing.T, pods int, event string) {
	t.Helper()
	n := map[string]int{}
	for _, c := range criCalls(t, e.fakecri.log, time.Time{}) {
		if c.pod != nil {
			n[c.pod.call]++
		}
	}
	for _, call := range []string{"RunPodSandbox", "CreateContainer"} {
		if n[call] != pods {
			errorf(t, "after %s the runtime saw %d %s calls for %d pods", event, n[call], call, pods)
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
