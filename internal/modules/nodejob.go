package modules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/kubeedge/edge/pkg/common/cloudconnection"
	commonmsg "github.com/kubeedge/kubeedge/edge/pkg/common/message"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// nodeJobType is the task type of a v1alpha2 NodeUpgradeJob in upgrade.Job
// (the journal keeps it): its reports go out as node action statuses, the
// v1alpha1 task's ("upgrade") as task results.
const nodeJobType = operationsv1alpha2.ResourceNodeUpgradeJob

// The actions of a v1alpha2 NodeUpgradeJob, in the order of upstream's
// flow: Check, WaitingConfirmation, BackUp, Upgrade, and RollBack when an
// upgrade fails.
const (
	actionCheck   = string(operationsv1alpha2.NodeUpgradeJobActionCheck)
	actionConfirm = string(operationsv1alpha2.NodeUpgradeJobActionWaitingConfirmation)
	actionBackUp  = string(operationsv1alpha2.NodeUpgradeJobActionBackUp)
	actionUpgrade = string(operationsv1alpha2.NodeUpgradeJobActionUpgrade)
	actionRoll    = string(operationsv1alpha2.NodeUpgradeJobActionRollBack)
)

// nodeJobResponse is the outcome of one action. A deferred one is reported
// later, by whichever edgecore runs once the upgrade's driver is done
// (upgrade.Node.Watch); the flow stops there.
type nodeJobResponse struct {
	err       error
	interrupt bool
	deferred  bool
	// as reports the response under another action: a node that already
	// runs the job's version answers Check with the Upgrade's success.
	as       string
	from, to string
	// messages, when set, are sent instead of the one status of the
	// action: an upgrade that failed before anything was replaced ends
	// the task with two (see nodeJobMessages).
	messages []taskmsg.UpstreamMessage
}

func (r *nodeJobResponse) Error() error        { return r.err }
func (r *nodeJobResponse) NeedInterrupt() bool { return r.interrupt || r.deferred }

// nodeUpgradeJobRunner answers NodeUpgradeJobs of operations/v1alpha2,
// which cloudcore v1.23 sends by default (v1alpha1 only with its
// DisableNodeTaskV1alpha2 gate). Upstream's runner pulls an installer image
// and runs keadm through bash; on Windows the package comes from the
// upgrade repository of upgrade.yaml and the service is driven as for a
// v1alpha1 job, by the same upgrade.Jobs.
func nodeUpgradeJobRunner(ctx context.Context, jobs *upgrade.Jobs, version string, statuses jobStatuses) (*actions.ActionRunner, *nodeJobHandler) {
	h := &nodeJobHandler{ctx: ctx, jobs: jobs, version: version, statuses: statuses, connected: cloudconnection.IsConnected}
	r := &actions.ActionRunner{
		Flow:               actionflow.FlowNodeUpgradeJob,
		GetSpecSerializer:  specOf,
		ReportActionStatus: h.report,
		Logger:             klog.Background().WithName("windows-node-upgrade-job"),
		Actions: map[string]actions.ActionFun{
			actionCheck:   h.check,
			actionConfirm: h.confirm,
			actionBackUp:  h.backup,
			actionUpgrade: h.upgrade,
			actionRoll:    h.rollback,
		},
	}
	// A confirmed job goes on from BackUp, in the flow that stopped at
	// WaitingConfirmation.
	h.proceed = func(w upgrade.Waiting) {
		// Its statuses go through edgehub: a job confirmed while
		// edgecore was down goes on once the hub is connected.
		for !h.connected() {
			if (clock.Real{}).Sleep(ctx, time.Second) != nil {
				return
			}
		}
		r.RunAction(ctx, w.Job, w.Node, actionBackUp, w.Spec)
	}
	return r, h
}

type specHolder struct {
	spec *operationsv1alpha2.NodeUpgradeJobSpec
}

func (s specHolder) GetSpec() any { return s.spec }

func specOf(data []byte) (actions.SpecSerializer, error) {
	var spec operationsv1alpha2.NodeUpgradeJobSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("the NodeUpgradeJob spec is not valid JSON: %w", err)
	}
	return specHolder{&spec}, nil
}

type nodeJobHandler struct {
	// ctx is the node's lifetime: upstream's runner hands its report
	// function none, and a wait between two statuses ends with it.
	ctx      context.Context
	jobs     *upgrade.Jobs
	version  string
	statuses jobStatuses
	// proceed runs a confirmed job on; awaiting is set while a job's
	// confirmation is followed.
	proceed  func(upgrade.Waiting)
	awaiting atomic.Bool
	// connected reports whether edgehub is connected to cloudcore.
	connected func() bool
}

// requestOf is the upgrade request of a v1alpha2 job for this node. The
// job's amd64 image digest, when given, is the package's SHA-256, as the
// v1alpha1 job's imageDigestGatter.value is.
func requestOf(job, node string, spec *operationsv1alpha2.NodeUpgradeJobSpec) upgrade.Request {
	r := upgrade.Request{
		Job:                 upgrade.Job{TaskID: job, TaskType: nodeJobType, Node: node},
		Version:             spec.Version,
		RequireConfirmation: spec.RequireConfirmation,
	}
	if g := spec.ImageDigestGetter; g != nil {
		r.Digest = g.AMD64
	}
	return r
}

func (h *nodeJobHandler) spec(ser actions.SpecSerializer) (*operationsv1alpha2.NodeUpgradeJobSpec, error) {
	spec, ok := ser.GetSpec().(*operationsv1alpha2.NodeUpgradeJobSpec)
	if !ok || spec == nil {
		return nil, fmt.Errorf("the job's spec is a %T, not a NodeUpgradeJobSpec", ser.GetSpec())
	}
	return spec, nil
}

// check refuses a node that does not run as the service before anything
// is fetched, then fetches and verifies the package and runs the checks of
// the v1alpha1 Checking step (the service, no upgrade in progress, disk,
// the job's check items).
func (h *nodeJobHandler) check(ctx context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	req := requestOf(job, node, spec)
	if strings.TrimSpace(spec.Version) == h.version {
		return &nodeJobResponse{as: actionUpgrade, from: h.version, to: h.version, interrupt: true}
	}
	if err := h.jobs.RunsAsService("the upgrade"); err != nil {
		return &nodeJobResponse{err: err}
	}
	if err := h.jobs.Stage(ctx, req); err != nil {
		return &nodeJobResponse{err: err}
	}
	if r := h.jobs.Check(req, spec.CheckItems); !r.Success {
		return &nodeJobResponse{err: errors.New(r.Reason)}
	}
	return &nodeJobResponse{}
}

// confirm: a job that asks for confirmation stops here, reported as
// upstream's node reports it (WaitingConfirmation True, the node's task
// InProgress), until an operator on the host runs `edgecore.exe upgrade
// confirm` (see internal/upgrade/confirm.go); the job then goes on from
// BackUp, as upstream's does after `keadm ctl confirm`.
func (h *nodeJobHandler) confirm(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	if !spec.RequireConfirmation {
		return &nodeJobResponse{}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	e := h.jobs.Env
	w := upgrade.Waiting{Job: job, Node: node, Version: spec.Version, Spec: data, Since: e.Clock.Now().UTC()}
	if err := upgrade.Wait(e, w); err != nil {
		return &nodeJobResponse{err: err}
	}
	klog.Infof("NodeUpgradeJob %s: waits for confirmation on the node; run `edgecore.exe upgrade confirm` as an administrator to upgrade to %s", job, spec.Version)
	h.awaitConfirmation()
	return &nodeJobResponse{interrupt: true}
}

// awaitConfirmation follows the waiting job in the background until it is
// confirmed, then runs the rest of it; one follower at a time.
func (h *nodeJobHandler) awaitConfirmation() {
	if !h.awaiting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer h.awaiting.Store(false)
		upgrade.AwaitConfirmation(h.ctx, h.jobs.Env, h.proceed, klog.Infof)
	}()
}

func (h *nodeJobHandler) backup(_ context.Context, _, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	return &nodeJobResponse{err: h.jobs.TakeBackup(), from: h.version, to: spec.Version}
}

// upgrade hands the upgrade to its driver, which restarts the service; the
// outcome is reported after the restart. A hand-over that fails changed
// nothing, so there is nothing to roll back.
func (h *nodeJobHandler) upgrade(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err, interrupt: true}
	}
	req := requestOf(job, node, spec)
	// The outcome, reported by the version that runs after the restart,
	// names the versions as the job does.
	req.Job.From, req.Job.To = h.version, spec.Version
	r, now := h.jobs.Upgrade(req)
	if now {
		r.From, r.To = h.version, spec.Version
		return &nodeJobResponse{err: errorOf(r), interrupt: true, messages: nodeJobMessages(r)}
	}
	return &nodeJobResponse{deferred: true}
}

func (h *nodeJobHandler) rollback(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	r, now := h.jobs.Rollback(requestOf(job, node, spec))
	if now {
		return &nodeJobResponse{err: errorOf(r)}
	}
	return &nodeJobResponse{deferred: true}
}

func errorOf(r upgrade.Report) error {
	if r.Success {
		return nil
	}
	return errors.New(r.Reason)
}

// report sends an action's outcome to the cloud, unless it comes later.
func (h *nodeJobHandler) report(job, node, action string, resp actions.ActionResponse) {
	r, ok := resp.(*nodeJobResponse)
	if !ok {
		// The runner's own failures (a spec it could not read, an
		// action without a handler).
		r = &nodeJobResponse{err: resp.Error()}
	}
	if r.deferred {
		return
	}
	if r.messages != nil {
		h.statuses.sendAll(h.ctx, nodeJobResource(job, node), r.messages)
		return
	}
	if r.as != "" {
		action = r.as
	}
	h.statuses.send(nodeJobResource(job, node), upstreamMessage(action, r.err, r.from, r.to))
}

// statusGap is how long the node waits before each further status of a
// job it reports at once (a failed Upgrade, then the RollBack that ends
// the task). Upstream's cloudhub hands every status a node sends to the
// task manager from a goroutine of its own (beehive's SendToGroup runs
// `go send(...)` per message); only from the task manager's channel on
// are they handled one at a time, in the order they entered it. Sent back
// to back, the two race for that channel: when the RollBack wins, the
// status updater ends the node's task with it (the job completes), then
// takes the Upgrade failure, whose action is not the last, and leaves the
// node InProgress for good with the failed version as its current one.
// That is what cloudcore v1.23.1 built from upstream's tree did; a
// cloudcore built with this project's beehive happens to keep the order.
// The first status enters the channel (1024 places) within microseconds
// of its arrival, so a gap of seconds orders the two on any cloudcore
// v1.23. Waiting for the cloud to confirm the first is not possible with
// every cloudcore: the task manager acknowledges nothing, and a node reads
// a NodeUpgradeJob back only through cloudcore's dynamicController, which
// is off by default.
const statusGap = 3 * time.Second

// jobStatuses sends a job's action statuses to the cloud.
type jobStatuses struct {
	send func(taskmsg.Resource, taskmsg.UpstreamMessage)
	// sleep waits between statuses (the node's clock); it fails when
	// ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
	gap   time.Duration
}

// newJobStatuses sends through send and waits statusGap on clk between
// the statuses of one report.
func newJobStatuses(send func(taskmsg.Resource, taskmsg.UpstreamMessage), clk clock.Clock) jobStatuses {
	return jobStatuses{send: send, sleep: clk.Sleep, gap: statusGap}
}

// sendAll sends msgs in order, each after the one before it had statusGap
// to reach the cloud's task manager (see statusGap). A node that stops in
// the gap sends no more: its edgehub is going down with it.
func (s jobStatuses) sendAll(ctx context.Context, res taskmsg.Resource, msgs []taskmsg.UpstreamMessage) {
	for i, m := range msgs {
		if i > 0 {
			if err := s.sleep(ctx, s.gap); err != nil {
				klog.Warningf("%s %s: the node is stopping; the %s status is not sent", res.ResourceType, res.JobName, m.Action)
				return
			}
		}
		s.send(res, m)
	}
}

func nodeJobResource(job, node string) taskmsg.Resource {
	return jobResource(operationsv1alpha2.ResourceNodeUpgradeJob, job, node)
}

func upstreamMessage(action string, err error, from, to string) taskmsg.UpstreamMessage {
	m := taskmsg.UpstreamMessage{Action: action, Succ: err == nil, FinishTime: time.Now().UTC().Format(time.RFC3339)}
	if err != nil {
		m.Reason = err.Error()
	}
	if from != "" || to != "" {
		m.Extend = taskmsg.FormatNodeUpgradeJobExtend(from, to)
	}
	return m
}

// nodeJobMessages turns the outcome of an upgrade driven for a v1alpha2
// job into the action statuses the cloud expects. An upgrade that
// succeeded is the Upgrade action's success (the job's last action). A
// failed Upgrade is never the last status: the cloud's flow goes on to
// RollBack and waits for it. So one that failed and was rolled back is the
// Upgrade's failure, then the RollBack's result; one that failed before the
// binary was replaced is the Upgrade's failure, then a RollBack that
// succeeded without work, since the old version never stopped being the
// one installed. The versions of the last status name what runs now.
func nodeJobMessages(r upgrade.Report) []taskmsg.UpstreamMessage {
	if r.Success && r.Event != "Rollback" {
		return []taskmsg.UpstreamMessage{upstreamMessage(actionUpgrade, nil, r.From, r.To)}
	}
	failed := upstreamMessage(actionUpgrade, errors.New(r.Reason), r.From, r.To)
	if r.Event != "Rollback" {
		roll := upstreamMessage(actionRoll, nil, r.To, r.From)
		roll.Reason = fmt.Sprintf("nothing to roll back: %s was not replaced", r.From)
		return []taskmsg.UpstreamMessage{failed, roll}
	}
	return []taskmsg.UpstreamMessage{failed, upstreamMessage(actionRoll, errorOf(r), r.To, r.From)}
}

// sendNodeJobStatus sends an action status through edgehub to the cloud's
// task manager, as upstream's runners do. Every status of every job
// leaves the node here, so here the credentials of any URL its reason
// quotes are taken out (redact): a job's status is read by everyone who
// may read the job.
func sendNodeJobStatus(res taskmsg.Resource, m taskmsg.UpstreamMessage) {
	m.Reason, m.Extend = redact.String(m.Reason), redact.String(m.Extend)
	select {
	case <-beehiveContext.Done():
		klog.Warningf("NodeUpgradeJob %s: the node is stopping; the %s status is not sent", res.JobName, m.Action)
		return
	default:
	}
	commonmsg.ReportNodeTaskStatus(res, m)
}
