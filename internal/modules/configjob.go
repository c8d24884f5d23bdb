package modules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/klog/v2"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/configjob"
	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// configJobType is the task type of a ConfigUpdateJob in upgrade.Job (the
// journal keeps it), so that its outcome goes out as the job's actions.
const configJobType = operationsv1alpha2.ResourceConfigUpdateJob

// The actions of a ConfigUpdateJob, in the order of upstream's flow:
// Check, BackUp, Update, and RollBack when the update fails.
const (
	configCheck  = string(operationsv1alpha2.ConfigUpdateJobActionCheck)
	configBackUp = string(operationsv1alpha2.ConfigUpdateJobActionBackUp)
	configUpdate = string(operationsv1alpha2.ConfigUpdateJobActionUpdate)
	configRoll   = string(operationsv1alpha2.ConfigUpdateJobActionRollBack)
)

// configJobs answers ConfigUpdateJobs on Windows. Upstream's runner runs
// `keadm backup edge`, `keadm config-update --set ...` and `keadm rollback
// edge`, which a Windows host has not: here the fields are judged by the
// node's own rules against the file (internal/configjob), and the change
// is made by the upgrade driver, which stops the service, backs the file
// up, replaces it, waits for the hub and the node's Ready status, and puts
// the backup back when they do not come (upgrade.Jobs.UpdateConfig).
type configJobs struct {
	jobs *upgrade.Jobs
	host config.Host
	// token is the join token the node was loaded with, never repeated.
	token string
	// statuses sends a job's statuses in order, a failed action's
	// RollBack after a gap (see statusGap), until ctx ends.
	statuses jobStatuses
	ctx      context.Context
	logf     func(format string, args ...any)
	// policy reads the node's cloud-job policy: which fields beyond the
	// tunables a job may change.
	policy func() (jobpolicy.Policy, error)
}

func configUpdateJobRunner(c *configJobs) *actions.ActionRunner {
	return &actions.ActionRunner{
		Flow:               actionflow.FlowConfigUpdateJob,
		GetSpecSerializer:  configSpecOf,
		ReportActionStatus: c.report,
		Logger:             klog.Background().WithName("windows-config-update-job"),
		Actions: map[string]actions.ActionFun{
			configCheck:  c.check,
			configBackUp: c.backup,
			configUpdate: c.update,
			configRoll:   c.rollback,
		},
	}
}

type configSpec struct {
	spec *operationsv1alpha2.ConfigUpdateJobSpec
}

func (s configSpec) GetSpec() any { return s.spec }

func configSpecOf(data []byte) (actions.SpecSerializer, error) {
	var spec operationsv1alpha2.ConfigUpdateJobSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("the ConfigUpdateJob spec is not valid JSON: %w", err)
	}
	return configSpec{&spec}, nil
}

// plan judges the job's fields against the file as it is now.
func (c *configJobs) plan(job string, ser actions.SpecSerializer) (*configjob.Plan, error) {
	spec, ok := ser.GetSpec().(*operationsv1alpha2.ConfigUpdateJobSpec)
	if !ok || spec == nil {
		return nil, fmt.Errorf("the job's spec is a %T, not a ConfigUpdateJobSpec", ser.GetSpec())
	}
	current, err := os.ReadFile(c.jobs.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("read the node's configuration: %w", err)
	}
	secrets := []string{c.token}
	if now, err := config.Parse(current, c.host); err == nil && now.Modules != nil && now.Modules.EdgeHub != nil {
		secrets = append(secrets, now.Modules.EdgeHub.Token)
	}
	pol, err := c.policy()
	if err != nil {
		err = fmt.Errorf("the ConfigUpdateJob is refused; nothing on the node changed: %w", err)
		c.logf("ConfigUpdateJob %s: %v", job, err)
		return nil, err
	}
	p, err := configjob.Make(current, spec.UpdateFields, configjob.Node{Host: c.host, Executable: c.jobs.Executable, Policy: pol}, secrets...)
	if err != nil {
		c.logf("ConfigUpdateJob %s: %v", job, err)
		return nil, err
	}
	return p, nil
}

// check refuses, before anything changes, fields that would break the
// node, and a node that does not run as the service (the update restarts
// it).
func (c *configJobs) check(_ context.Context, job, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	if err := c.jobs.RunsAsService("a configuration update"); err != nil {
		return &nodeJobResponse{err: err}
	}
	p, err := c.plan(job, ser)
	if err != nil {
		return &nodeJobResponse{err: err}
	}
	c.logf("ConfigUpdateJob %s: the node's rules accept %s", job, strings.Join(p.Changes, ", "))
	return &nodeJobResponse{}
}

// backup: the configuration is copied by the driver once the service has
// stopped (the copy a rollback restores); here the plan is judged again,
// since the file may have changed since Check.
func (c *configJobs) backup(_ context.Context, job, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	_, err := c.plan(job, ser)
	return &nodeJobResponse{err: err}
}

// update hands the new configuration to the driver; the outcome is
// reported after the restart. A hand-over that fails changed nothing:
// the update's failure is followed by a RollBack that had nothing to do,
// since the cloud's flow waits for one.
func (c *configJobs) update(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
	p, err := c.plan(job, ser)
	if err == nil {
		c.logf("ConfigUpdateJob %s: applying %s", job, strings.Join(p.Changes, ", "))
		r, now := c.jobs.UpdateConfig(upgrade.Request{Job: upgrade.Job{TaskID: job, TaskType: configJobType, Node: node}}, p.Text)
		if !now {
			return &nodeJobResponse{deferred: true}
		}
		err = errors.New(r.Reason)
	}
	return &nodeJobResponse{err: err, interrupt: true, messages: configJobMessages(upgrade.Report{Event: "Update", Reason: err.Error()})}
}

func (c *configJobs) rollback(context.Context, string, string, actions.SpecSerializer) actions.ActionResponse {
	return &nodeJobResponse{}
}

// report sends an action's outcome to the cloud, unless it comes later,
// with the token taken out of every reason.
func (c *configJobs) report(job, node, action string, resp actions.ActionResponse) {
	r, ok := resp.(*nodeJobResponse)
	if !ok {
		r = &nodeJobResponse{err: resp.Error()}
	}
	if r.deferred {
		return
	}
	msgs := r.messages
	if msgs == nil {
		msgs = []taskmsg.UpstreamMessage{upstreamMessage(action, r.err, "", "")}
	}
	redacted := make([]taskmsg.UpstreamMessage, len(msgs))
	for i, m := range msgs {
		m.Reason = redact.String(m.Reason, c.token)
		redacted[i] = m
	}
	c.statuses.sendAll(c.ctx, jobResource(operationsv1alpha2.ResourceConfigUpdateJob, job, node), redacted)
}

// configJobMessages turns the outcome of a configuration update into the
// action statuses the cloud's flow expects: Update's success ends it; a
// failed Update is followed by RollBack, whose result is the node's.
func configJobMessages(r upgrade.Report) []taskmsg.UpstreamMessage {
	if r.Success && r.Event == "Update" {
		return []taskmsg.UpstreamMessage{upstreamMessage(configUpdate, nil, "", "")}
	}
	failed := upstreamMessage(configUpdate, errors.New(r.Reason), "", "")
	if r.Event == "Update" {
		roll := upstreamMessage(configRoll, nil, "", "")
		roll.Reason = "nothing to roll back: the configuration was not replaced"
		return []taskmsg.UpstreamMessage{failed, roll}
	}
	roll := upstreamMessage(configRoll, errorOf(upgrade.Report{Success: r.Success, Reason: r.Reason}), "", "")
	roll.Reason = r.Reason
	return []taskmsg.UpstreamMessage{failed, roll}
}

func jobResource(kind, job, node string) taskmsg.Resource {
	return taskmsg.Resource{
		APIVersion:   operationsv1alpha2.SchemeGroupVersion.String(),
		ResourceType: kind,
		JobName:      job,
		NodeName:     node,
	}
}
