package modules

import (
	"context"
	"testing"
	"time"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// upstreamCloud is cloudcore v1.23's path for a node's job statuses, as
// upstream's tree builds it: cloudhub hands each status to the task
// manager from a goroutine of its own (beehive's SendToGroup), the task
// manager takes them one at a time in the order they reach its channel,
// and its status updater applies each as upstream's does: the phase from
// whether the action ends the flow, the versions from Extend.
//
// Time is the node's clock, which moves only when the node waits: a status
// reaches the channel within upstreamInFlight of when the node sent it,
// so statuses sent less than that apart race for the channel, and the
// model lets the newer one in first (the order that broke the job);
// statuses sent further apart enter in the order they were sent.
type upstreamCloud struct {
	clock *hosttest.Clock
	sent  []sentStatus
	// The node's task as the job's status shows it.
	phase             operationsv1alpha2.NodeTaskPhase
	historic, current string
	flow              []string
}

// upstreamInFlight bounds how long cloudhub's goroutine takes to put a
// status into the task manager's channel: microseconds on an idle
// cloudcore; a second stands for a busy one.
const upstreamInFlight = time.Second

type sentStatus struct {
	at time.Time
	m  taskmsg.UpstreamMessage
}

func newUpstreamCloud(clk *hosttest.Clock) *upstreamCloud {
	return &upstreamCloud{clock: clk}
}

// send is what the node's edgehub delivers: the status, at the node's
// time.
func (c *upstreamCloud) send(_ taskmsg.Resource, m taskmsg.UpstreamMessage) {
	c.sent = append(c.sent, sentStatus{at: c.clock.Now(), m: m})
}

// run lets every status sent so far into the task manager, in the order
// they reach its channel, and applies them.
func (c *upstreamCloud) run() {
	var race []sentStatus
	enter := func() {
		for i := len(race) - 1; i >= 0; i-- {
			c.apply(race[i].m)
		}
		race = nil
	}
	for _, s := range c.sent {
		if len(race) > 0 && s.at.Sub(race[len(race)-1].at) >= upstreamInFlight {
			enter()
		}
		race = append(race, s)
	}
	enter()
	c.sent = nil
}

// gaps are the times between consecutive statuses as the node sent them,
// read off the node's clock.
func (c *upstreamCloud) gaps() []time.Duration {
	var out []time.Duration
	for i := 1; i < len(c.sent); i++ {
		out = append(out, c.sent[i].at.Sub(c.sent[i-1].at))
	}
	return out
}

// apply is cloud/pkg/taskmanager/upstream's handleUpstreamMessage and
// tryUpdateNodeUpgradeJobStatus for one status.
func (c *upstreamCloud) apply(m taskmsg.UpstreamMessage) {
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
	cloud := newUpstreamCloud(&hosttest.Clock{})
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
// (the runner's report). The statuses are the production ones
// (newJobStatuses) on a clock of the test's: the gap asserted is the one
// the cloud saw between the two statuses, which must outlast the race.
func TestFailedUpgradeEndsRightOnUpstreamCloud(t *testing.T) {
	check := func(t *testing.T, cloud *upstreamCloud) {
		t.Helper()
		gaps := cloud.gaps()
		if len(gaps) != 1 || gaps[0] < upstreamInFlight {
			t.Fatalf("the cloud saw the statuses %v apart, want one gap of at least %s", gaps, upstreamInFlight)
		}
		cloud.run()
		if got := cloud.flow; len(got) != 2 || got[0] != actionUpgrade || got[1] != actionRoll {
			t.Fatalf("the cloud took %v, want Upgrade then RollBack", got)
		}
		if cloud.phase != operationsv1alpha2.NodeTaskPhaseSuccessful || cloud.current != "v0.2.0" || cloud.historic != "v0.3.0" {
			t.Fatalf("the node's task ended %s, current %q, historic %q; want Successful, back on v0.2.0 after v0.3.0", cloud.phase, cloud.current, cloud.historic)
		}
		t.Logf("the node left %s between Upgrade and RollBack", gaps[0])
	}
	t.Run("after the restart", func(t *testing.T) {
		clk := &hosttest.Clock{}
		cloud := newUpstreamCloud(clk)
		send := sendTaskReport(context.Background(), "win-1", newJobStatuses(cloud.send, clk))
		send(upgrade.Job{TaskID: "to-v0.3.0", TaskType: nodeJobType, Node: "win-1"}, rolledBack)
		check(t, cloud)
	})
	t.Run("refused before the swap", func(t *testing.T) {
		clk := &hosttest.Clock{}
		cloud := newUpstreamCloud(clk)
		refused := upgrade.Report{Event: "Upgrade", Reason: "upgrade to v0.3.0 failed before the binary was replaced; v0.2.0 still runs: disk full", From: "v0.2.0", To: "v0.3.0"}
		h := nodeJobHandler{ctx: context.Background(), statuses: newJobStatuses(cloud.send, clk)}
		h.report("to-v0.3.0", "win-1", actionUpgrade, &nodeJobResponse{err: errorOf(refused), interrupt: true, messages: nodeJobMessages(refused)})
		check(t, cloud)
	})
}

// A node that stops between the two statuses sends no more.
func TestStatusesStopWithTheNode(t *testing.T) {
	var sent []string
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newJobStatuses(func(_ taskmsg.Resource, m taskmsg.UpstreamMessage) { sent = append(sent, m.Action) }, &hosttest.Clock{})
	s.sendAll(ctx, taskmsg.Resource{JobName: "j"}, nodeJobMessages(rolledBack))
	if len(sent) != 1 || sent[0] != actionUpgrade {
		t.Fatalf("sent %v, want only the Upgrade status", sent)
	}
}
