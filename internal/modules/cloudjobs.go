package modules

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// cloudJobs are the Windows runners of the cloud's v1alpha2 node jobs
// other than NodeUpgradeJob: ConfigUpdateJob and ImagePrePullJob.
type cloudJobs struct {
	config  *configJobs
	prepull *prePullJobs
}

func newCloudJobs(ctx context.Context, host config.Host, c *v1alpha2.EdgeCoreConfig, jobs *upgrade.Jobs, statuses jobStatuses) cloudJobs {
	token := ""
	if c.Modules != nil && c.Modules.EdgeHub != nil {
		token = c.Modules.EdgeHub.Token
	}
	return cloudJobs{
		config:  &configJobs{jobs: jobs, host: host, token: token, statuses: statuses, ctx: ctx, logf: klog.Infof},
		prepull: newPrePullJobs(c),
	}
}

// register installs the runners in place of upstream's, which
// taskmanager.Register installs first.
func (cj cloudJobs) register() {
	actions.RegisterRunner(operationsv1alpha2.ResourceConfigUpdateJob, configUpdateJobRunner(cj.config))
	actions.RegisterRunner(operationsv1alpha2.ResourceImagePrePullJob, imagePrePullJobRunner(cj.prepull))
}
