package modules

import (
	"context"
	"sync"
	"testing"
	"time"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// upstreamCloud is cloudcore v1.23's path for a node's job statuses, as
// upstream's tree builds it: cloudhub hands each status to the task
// manager from a goroutine of its own (beehive's SendToGroup), the task
// manager takes them one at a time in the order they reach its channel,
// and its status updater applies each as upstream's does: the phase from
// whether the action ends the flow, the versions from Extend. Statuses
// whose goroutines are in flight together reach the channel in any
// order; run lets them in newest first, the order that broke the job.
type upstreamCloud struct {
	mu       sync.Mutex
	inFlight []chan struct{}
	done     chan struct{}
	// The node's task as the job's status shows it.
	phase             operationsv1alpha2.NodeTaskPhase
	historic, current string
	flow              []string
}

func newUpstreamCloud() *upstreamCloud {
	return &upstreamCloud{done: make(chan struct{})}
}

func (c *upstreamCloud) send(_ taskmsg.Resource, m taskmsg.UpstreamMessage) {
	release := make(chan struct{})
	c.mu.Lock()
	c.inFlight = append(c.inFlight, release)
	c.mu.Unlock()
	go func() {
		<-release
		c.apply(m)
		c.done <- struct{}{}
	}()
}

// run lets the statuses in flight reach the task manager, newest first,
// and returns once each is applied.
func (c *upstreamCloud) run() {
	c.mu.Lock()
	pending := c.inFlight
	c.inFlight = nil
	c.mu.Unlock()
	for i := len(pending) - 1; i >= 0; i-- {
		close(pending[i])
		<-c.done
	}
}

// apply is cloud/pkg/taskmanager/upstream's handleUpstreamMessage and
// tryUpdateNodeUpgradeJobStatus for one status.
func (c *upstreamCloud) apply(m taskmsg.UpstreamMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := actionflow.FlowNodeUpgradeJob.Find(m.Action)
	final := m.Succ && a.NextSuccessful == nil || !m.Succ && a.NextFailure == nil
	c.phase = operationsv1alpha2.NodeTaskPhaseInProgress
	if final && m.Succ {
		c.phase = operationsv1alpha2.NodeTaskPhaseSuccessful
	} else if final {
		c.phase = operationsv1alpha2.NodeTaskPhaseFailure
	}
	if m.Extend != "" {
		c.historic, c.current, _ = taskmsg.ParseNodeUpgradeJobExtend(m.Extend)
	}
	c.flow = append(c.flow, m.Action)
}

// A rolled-back upgrade reported back to back, as the node did before:
// the cloud applies the RollBack first and leaves the node's task
// InProgress on the failed version, as measured against cloudcore v1.23.1
// built from upstream's tree. This proves the fake reproduces the fault.
func TestBackToBackStatusesEndWrongOnUpstreamCloud(t *testing.T) {
	cloud := newUpstreamCloud()
	for _, m := range nodeJobMessages(rolledBack) {
		cloud.send(taskmsg.Resource{}, m)
	}
	cloud.run()
	if cloud.phase != operationsv1alpha2.NodeTaskPhaseInProgress || cloud.current != "v0.3.0" {
		t.Fatalf("the fake cloud ended at %s on %s (flow %v); upstream's ended InProgress on v0.3.0", cloud.phase, cloud.current, cloud.flow)
	}
}

var rolledBack = upgrade.Report{Event: "Rollback", Success: true, Reason: "upgrade to v0.3.0 failed and was rolled back to v0.2.0: exit 1", From: "v0.2.0", To: "v0.3.0"}

// The node's reports of a failed upgrade end the node's task right on
// upstream's cloud: Upgrade False, then RollBack True, the task Successful
// and the node back on the version it ran. Both ways a failure is
// reported go through it: the driver's outcome after the restart
// (sendTaskReport) and an upgrade refused before anything was replaced
// (the runner's report).
func TestFailedUpgradeEndsRightOnUpstreamCloud(t *testing.T) {
	check := func(t *testing.T, cloud *upstreamCloud, gaps []time.Duration) {
		t.Helper()
		cloud.run()
		if got := cloud.flow; len(got) != 2 || got[0] != actionUpgrade || got[1] != actionRoll {
			t.Fatalf("the cloud took %v, want Upgrade then RollBack", got)
		}
		if cloud.phase != operationsv1alpha2.NodeTaskPhaseSuccessful || cloud.current != "v0.2.0" || cloud.historic != "v0.3.0" {
			t.Fatalf("the node's task ended %s, current %q, historic %q; want Successful, back on v0.2.0 after v0.3.0", cloud.phase, cloud.current, cloud.historic)
		}
		if len(gaps) != 1 || gaps[0] != statusGap {
			t.Fatalf("waits between the statuses %v, want one of %s", gaps, statusGap)
		}
	}
	statuses := func(cloud *upstreamCloud, gaps *[]time.Duration) jobStatuses {
		return jobStatuses{send: cloud.send, gap: statusGap, sleep: func(_ context.Context, d time.Duration) error {
			*gaps = append(*gaps, d)
			// While the node waits, the cloud's goroutines run.
			cloud.run()
			return nil
		}}
	}
	t.Run("after the restart", func(t *testing.T) {
		cloud, gaps := newUpstreamCloud(), []time.Duration{}
		send := sendTaskReport(context.Background(), "win-1", statuses(cloud, &gaps))
		send(upgrade.Job{TaskID: "to-v0.3.0", TaskType: nodeJobType, Node: "win-1"}, rolledBack)
		check(t, cloud, gaps)
	})
	t.Run("refused before the swap", func(t *testing.T) {
		cloud, gaps := newUpstreamCloud(), []time.Duration{}
		refused := upgrade.Report{Event: "Upgrade", Reason: "upgrade to v0.3.0 failed before the binary was replaced; v0.2.0 still runs: disk full", From: "v0.2.0", To: "v0.3.0"}
		h := nodeJobHandler{ctx: context.Background(), statuses: statuses(cloud, &gaps)}
		h.report("to-v0.3.0", "win-1", actionUpgrade, &nodeJobResponse{err: errorOf(refused), interrupt: true, messages: nodeJobMessages(refused)})
		check(t, cloud, gaps)
	})
}

// A node that stops between the two statuses sends no more.
func TestStatusesStopWithTheNode(t *testing.T) {
	var sent []string
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := jobStatuses{send: func(_ taskmsg.Resource, m taskmsg.UpstreamMessage) { sent = append(sent, m.Action) },
		gap: statusGap, sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
	s.sendAll(ctx, taskmsg.Resource{JobName: "j"}, nodeJobMessages(rolledBack))
	if len(sent) != 1 || sent[0] != actionUpgrade {
		t.Fatalf("sent %v, want only the Upgrade status", sent)
	}
}
