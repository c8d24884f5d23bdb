package modules

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// cloudJobs are the Windows runners of the cloud's v1alpha2 node jobs
// other than NodeUpgradeJob: ConfigUpdateJob and ImagePrePullJob.
type cloudJobs struct {
	config  *configJobs
	prepull *prePullJobs
}

// newCloudJobs makes the runners of the node configured by c; policy
// reads the node's cloud-job policy (jobpolicy.Load), at each job, so
// that an administrator's change counts from the next job on.
func newCloudJobs(ctx context.Context, host config.Host, c *v1alpha2.EdgeCoreConfig, jobs *upgrade.Jobs, statuses jobStatuses, policy func() (jobpolicy.Policy, error)) cloudJobs {
	token := ""
	if c.Modules != nil && c.Modules.EdgeHub != nil {
		token = c.Modules.EdgeHub.Token
	}
	pp := newPrePullJobs(c)
	pp.policy = policy
	return cloudJobs{
		config:  &configJobs{jobs: jobs, host: host, token: token, statuses: statuses, ctx: ctx, logf: klog.Infof, policy: policy},
		prepull: pp,
	}
}

// hostPolicy reads the policy of the node on d's host, judging the file
// as protect judges what the node acts on without owning it.
func hostPolicy(d *deps.Dependencies) func() (jobpolicy.Policy, error) {
	path := jobpolicy.PathOf(d.Layout)
	judge := jobpolicy.HostJudge(d.Host.GOOS, d.ACLs)
	return func() (jobpolicy.Policy, error) { return jobpolicy.Load(path, d.FS.ReadFile, judge) }
}

// register installs the runners in place of upstream's, which
// taskmanager.Register installs first.
func (cj cloudJobs) register() {
	actions.RegisterRunner(operationsv1alpha2.ResourceConfigUpdateJob, configUpdateJobRunner(cj.config))
	actions.RegisterRunner(operationsv1alpha2.ResourceImagePrePullJob, imagePrePullJobRunner(cj.prepull))
}
