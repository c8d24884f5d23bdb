package modules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/klog/v2"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	commonmsg "github.com/kubeedge/kubeedge/edge/pkg/common/message"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

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
func nodeUpgradeJobRunner(jobs *upgrade.Jobs, version string, send func(taskmsg.Resource, taskmsg.UpstreamMessage)) *actions.ActionRunner {
	h := nodeJobHandler{jobs: jobs, version: version, send: send}
	return &actions.ActionRunner{
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
	jobs    *upgrade.Jobs
	version string
	send    func(taskmsg.Resource, taskmsg.UpstreamMessage)
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

func (h nodeJobHandler) spec(ser actions.SpecSerializer) (*operationsv1alpha2.NodeUpgradeJobSpec, error) {
	spec, ok := ser.GetSpec().(*operationsv1alpha2.NodeUpgradeJobSpec)
	if !ok || spec == nil {
		return nil, fmt.Errorf("the job's spec is a %T, not a NodeUpgradeJobSpec", ser.GetSpec())
	}
	return spec, nil
}

// check fetches and verifies the package, then runs the checks of the
// v1alpha1 Checking step (the service, no upgrade in progress, disk, the
// job's check items).
func (h nodeJobHandler) check(ctx context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	req := requestOf(job, node, spec)
	if strings.TrimSpace(spec.Version) == h.version {
		return &nodeJobResponse{as: actionUpgrade, from: h.version, to: h.version, interrupt: true}
	}
	if err := h.jobs.Stage(ctx, req); err != nil {
		return &nodeJobResponse{err: err}
	}
	if r := h.jobs.Check(req, spec.CheckItems); !r.Success {
		return &nodeJobResponse{err: errors.New(r.Reason)}
	}
	return &nodeJobResponse{}
}

// confirm: a job that asks for confirmation waits for `keadm ctl confirm`
// on the node upstream; there is no keadm on a Windows host, so such a job
// fails here with the fix instead of waiting for ever.
func (h nodeJobHandler) confirm(_ context.Context, _, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	if spec.RequireConfirmation {
		return &nodeJobResponse{err: errors.New("requireConfirmation is not supported by edgecore for Windows: there is no keadm on the host to confirm with; create the job without it")}
	}
	return &nodeJobResponse{}
}

func (h nodeJobHandler) backup(_ context.Context, _, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := h.spec(ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	return &nodeJobResponse{err: h.jobs.TakeBackup(), from: h.version, to: spec.Version}
}

// upgrade hands the upgrade to its driver, which restarts the service; the
// outcome is reported after the restart. A hand-over that fails changed
// nothing, so there is nothing to roll back.
func (h nodeJobHandler) upgrade(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
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

func (h nodeJobHandler) rollback(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
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
func (h nodeJobHandler) report(job, node, action string, resp actions.ActionResponse) {
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
		res := nodeJobResource(job, node)
		for _, m := range r.messages {
			h.send(res, m)
		}
		return
	}
	if r.as != "" {
		action = r.as
	}
	h.send(nodeJobResource(job, node), upstreamMessage(action, r.err, r.from, r.to))
}

func nodeJobResource(job, node string) taskmsg.Resource {
	return taskmsg.Resource{
		APIVersion:   operationsv1alpha2.SchemeGroupVersion.String(),
		ResourceType: operationsv1alpha2.ResourceNodeUpgradeJob,
		JobName:      job,
		NodeName:     node,
	}
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
// task manager, as upstream's runners do.
func sendNodeJobStatus(res taskmsg.Resource, m taskmsg.UpstreamMessage) {
	select {
	case <-beehiveContext.Done():
		klog.Warningf("NodeUpgradeJob %s: the node is stopping; the %s status is not sent", res.JobName, m.Action)
		return
	default:
	}
	commonmsg.ReportNodeTaskStatus(res, m)
}
