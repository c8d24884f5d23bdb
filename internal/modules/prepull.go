package modules

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v3/disk"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/common/constants"
	metaclient "github.com/kubeedge/kubeedge/edge/pkg/metamanager/client"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	"github.com/kubeedge/kubeedge/pkg/image"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
	"github.com/kubeedge-windows/edgecore/internal/prepull"
)

const (
	prePullCheck = string(operationsv1alpha2.ImagePrePullJobActionCheck)
	prePullPull  = string(operationsv1alpha2.ImagePrePullJobActionPull)
)

// prePullJobs answers ImagePrePullJobs on Windows. Upstream's runner
// reaches the runtime through the node's npipe endpoint as well, but its
// disk check measures "/" rather than the volume the kubelet keeps its
// data on, it never applies the pull secret's credentials (it decodes the
// .dockerconfigjson as one CRI AuthConfig), and it pulls the whole list
// again when one image fails.
type prePullJobs struct {
	// runtime connects to the node's CRI image service.
	runtime func() (prepull.Puller, error)
	// secret reads a pull secret from the node's metadata (metamanager,
	// which fetches it from the cloud).
	secret func(namespace, name string) (*corev1.Secret, error)
	// check runs the job's check items other than disk (cpu, mem).
	check func(items []string) error
	// diskUsed is the used share of the volume of dir, in percent.
	diskUsed func(dir string) (float64, error)
	rootDir  string
	// nodeNamespace is the node's own namespace
	// (modules.edged.registerNodeNamespace), where a job's pull secret
	// may come from; policy names any other (jobpolicy.PullSecretAllowed).
	nodeNamespace string
	policy        func() (jobpolicy.Policy, error)
	delay         time.Duration
	send          func(taskmsg.Resource, taskmsg.UpstreamMessage)
	logf          func(format string, args ...any)
}

func newPrePullJobs(c *v1alpha2.EdgeCoreConfig) *prePullJobs {
	var endpoint, root, namespace string
	timeout := 2 * time.Minute
	if c.Modules != nil && c.Modules.Edged != nil && c.Modules.Edged.TailoredKubeletConfig != nil {
		k := c.Modules.Edged.TailoredKubeletConfig
		endpoint, root, namespace = k.ContainerRuntimeEndpoint, c.Modules.Edged.RootDirectory, c.Modules.Edged.RegisterNodeNamespace
		if k.RuntimeRequestTimeout.Duration > 0 {
			timeout = k.RuntimeRequestTimeout.Duration
		}
	}
	return &prePullJobs{
		runtime: func() (prepull.Puller, error) { return image.NewImageRuntime(endpoint, timeout) },
		secret: func(ns, name string) (*corev1.Secret, error) {
			return metaclient.New().Secrets(ns).Get(name)
		},
		check: actions.PreCheck,
		diskUsed: func(dir string) (float64, error) {
			u, err := disk.Usage(dir)
			if err != nil {
				return 0, err
			}
			return u.UsedPercent, nil
		},
		rootDir:       root,
		nodeNamespace: namespace,
		policy:        func() (jobpolicy.Policy, error) { return jobpolicy.Policy{}, nil },
		delay:         500 * time.Millisecond,
		send:          sendNodeJobStatus,
		logf:          klog.Infof,
	}
}

func imagePrePullJobRunner(p *prePullJobs) *actions.ActionRunner {
	return &actions.ActionRunner{
		Flow:               actionflow.FlowImagePrePullJob,
		GetSpecSerializer:  prePullSpecOf,
		ReportActionStatus: p.report,
		Logger:             klog.Background().WithName("windows-image-prepull-job"),
		Actions: map[string]actions.ActionFun{
			prePullCheck: p.checkItems,
			prePullPull:  p.pull,
		},
	}
}

type prePullSpec struct {
	spec *operationsv1alpha2.ImagePrePullJobSpec
}

func (s prePullSpec) GetSpec() any { return s.spec }

func prePullSpecOf(data []byte) (actions.SpecSerializer, error) {
	var spec operationsv1alpha2.ImagePrePullJobSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("the ImagePrePullJob spec is not valid JSON: %w", err)
	}
	return prePullSpec{&spec}, nil
}

// prePullResponse is an action's outcome, with the images' statuses of a
// Pull.
type prePullResponse struct {
	err    error
	images []operationsv1alpha2.ImageStatus
}

func (r *prePullResponse) Error() error        { return r.err }
func (r *prePullResponse) NeedInterrupt() bool { return false }

func prePullSpecFrom(ser actions.SpecSerializer) (*operationsv1alpha2.ImagePrePullJobSpec, error) {
	spec, ok := ser.GetSpec().(*operationsv1alpha2.ImagePrePullJobSpec)
	if !ok || spec == nil {
		return nil, fmt.Errorf("the job's spec is a %T, not an ImagePrePullJobSpec", ser.GetSpec())
	}
	return spec, nil
}

// checkItems runs the job's check items; disk is the volume of the
// kubelet's root directory, where a Windows node keeps its data.
func (p *prePullJobs) checkItems(_ context.Context, _, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := prePullSpecFrom(ser)
	if err != nil {
		return &prePullResponse{err: err}
	}
	var rest []string
	for _, item := range spec.ImagePrePullTemplate.CheckItems {
		if item != operationsv1alpha2.CheckItemDisk {
			rest = append(rest, item)
			continue
		}
		used, err := p.diskUsed(p.rootDir)
		if err != nil {
			return &prePullResponse{err: fmt.Errorf("disk: the usage of the volume of %s: %v", p.rootDir, err)}
		}
		if used > actions.MaxDiskUsage {
			return &prePullResponse{err: fmt.Errorf("disk: the volume of %s is %.2f%% used, more than the %.0f%% a pre-pull allows: free some space", p.rootDir, used, actions.MaxDiskUsage)}
		}
	}
	if len(rest) > 0 {
		if err := p.check(rest); err != nil {
			return &prePullResponse{err: err}
		}
	}
	return &prePullResponse{}
}

// pull pulls each image with the secret's credentials for its registry.
func (p *prePullJobs) pull(ctx context.Context, job, _ string, ser actions.SpecSerializer) actions.ActionResponse {
	spec, err := prePullSpecFrom(ser)
	if err != nil {
		return &prePullResponse{err: err}
	}
	t := spec.ImagePrePullTemplate
	j := prepull.Job{Images: t.Images, Retries: int(t.RetryTimes), Delay: p.delay}
	if t.ImageSecret != "" {
		ns, name, ok := strings.Cut(t.ImageSecret, constants.ResourceSep)
		if !ok || ns == "" || name == "" || strings.Contains(name, constants.ResourceSep) {
			return &prePullResponse{err: fmt.Errorf("spec.imagePrePullTemplate.imageSecret is %q: give it as namespace/name", t.ImageSecret)}
		}
		pol, err := p.policy()
		if err != nil {
			return &prePullResponse{err: err}
		}
		if err := pol.PullSecretAllowed(ns, p.nodeNamespace); err != nil {
			return &prePullResponse{err: err}
		}
		s, err := p.secret(ns, name)
		if err != nil {
			return &prePullResponse{err: fmt.Errorf("the pull secret %s/%s: %v", ns, name, err)}
		}
		if j.Keyring, err = prepull.NewKeyring(s.Data[corev1.DockerConfigJsonKey]); err != nil {
			return &prePullResponse{err: fmt.Errorf("the pull secret %s/%s: %v", ns, name, err)}
		}
	}
	rt, err := p.runtime()
	if err != nil {
		return &prePullResponse{err: fmt.Errorf("the container runtime: %v", err)}
	}
	start := time.Now()
	images, all := prepull.Pull(ctx, rt, j)
	var failed []string
	for _, st := range images {
		if st.Status != "True" {
			failed = append(failed, st.Image)
		}
	}
	p.logf("ImagePrePullJob %s: %d of %d images pulled in %v", job, len(images)-len(failed), len(images), time.Since(start).Round(time.Millisecond))
	if !all {
		return &prePullResponse{images: images, err: fmt.Errorf("%d of %d images were not pulled: %s (each image's status says why)", len(failed), len(images), strings.Join(failed, ", "))}
	}
	return &prePullResponse{images: images}
}

func (p *prePullJobs) report(job, node, action string, resp actions.ActionResponse) {
	m := upstreamMessage(action, resp.Error(), "", "")
	if r, ok := resp.(*prePullResponse); ok && action == prePullPull {
		ext, err := taskmsg.FormatImagePrePullJobExtend(r.images)
		if err != nil {
			p.logf("ImagePrePullJob %s: the images' statuses: %v", job, err)
		}
		m.Extend = ext
	}
	p.send(jobResource(operationsv1alpha2.ResourceImagePrePullJob, job, node), m)
}
