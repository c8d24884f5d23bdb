package modules

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	api "github.com/kubeedge/api/apis/fsm/v1alpha1"
	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	commontypes "github.com/kubeedge/kubeedge/common/types"
	"github.com/kubeedge/kubeedge/edge/pkg/common/cloudconnection"
	commonmsg "github.com/kubeedge/kubeedge/edge/pkg/common/message"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/v1alpha1/taskexecutor"
	"github.com/kubeedge/kubeedge/pkg/util/fsm"
	kubeedgeversion "github.com/kubeedge/kubeedge/pkg/version"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// UpgradeAgent is the node's part in upgrades: the executors of the cloud's
// NodeUpgradeJobs and the watcher of the upgrade journal. node.Run makes
// one from the loaded configuration, registers it with the modules and
// starts its watch; everything it needs is in the value.
type UpgradeAgent struct {
	// ctx is the node's lifetime.
	ctx      context.Context
	statuses jobStatuses
	// confirmations follows a NodeUpgradeJob that waits for the
	// operator (set by register).
	confirmations *nodeJobHandler
	node          *upgrade.Node
	jobs          *upgrade.Jobs
	nodeName      string
	ready         *nodeReadiness
	// kubeedge is the KubeEdge version this binary was built from, the
	// version a NodeUpgradeJob names and the cloud shows for the node;
	// jobs.Env.Version is this project's own release version.
	kubeedge string
	// cloudJobs are the node's runners of the other v1alpha2 jobs.
	cloudJobs cloudJobs
	// release hands a held pod to edged (releaseHeldPod).
	release func(namespace, name string)
}

// NewUpgradeAgent prepares the upgrade agent of the node that runs
// configFile (c, as loaded) on d's host, for the node's lifetime ctx: a
// step in the background ends with it.
func NewUpgradeAgent(ctx context.Context, d *deps.Dependencies, c *v1alpha2.EdgeCoreConfig, configFile string) *UpgradeAgent {
	host := d.Host
	env := upgrade.HostEnv(d)
	exe, err := d.ExecutablePath()
	if err != nil {
		klog.Warningf("Cannot find the path of edgecore for upgrades: %v", err)
	}
	nodeName := c.Modules.Edged.HostnameOverride
	dataSource := c.DataBase.DataSource
	facts := upgrade.HostFacts(host)
	facts.DataSource = func(string) (string, error) { return dataSource, nil }
	ready := &nodeReadiness{}
	statuses := newJobStatuses(sendNodeJobStatus)
	node := &upgrade.Node{
		Env: env, Started: time.Now(), Executable: exe,
		Connected: cloudconnection.IsConnected,
		Ready:     ready.Ready,
		Send:      sendTaskReport(ctx, nodeName, statuses),
		Logf:      klog.Infof,
	}
	jobs := &upgrade.Jobs{
		Env: env, ConfigFile: configFile, Executable: exe, Service: service.DefaultName,
		Facts:      facts,
		InService:  service.IsWindowsService,
		Fetch:      upgrade.Fetcher{}.Fetch,
		Context:    func() context.Context { return ctx },
		FreeDisk:   d.Probes.FreeDisk,
		CheckItems: upstreamCheckItems,
		Send:       sendTaskReport(ctx, nodeName, statuses),
		Logf:       klog.Infof,
		Watch:      func() { go node.Watch(ctx) },
	}
	return &UpgradeAgent{ctx: ctx, node: node, jobs: jobs, statuses: statuses, nodeName: nodeName, ready: ready, kubeedge: kubeedgeversion.Get().GitVersion,
		cloudJobs: newCloudJobs(ctx, host, c, jobs, statuses, hostPolicy(d)), release: releaseHeldPod}
}

// register installs the Windows executor of v1alpha1 NodeUpgradeJob tasks
// and the Windows runner of v1alpha2 NodeUpgradeJobs in place of
// upstream's, which run `keadm upgrade edge` through bash, and makes the
// kubelet's node status observable for the upgrade's health gate.
// Upstream's register in taskmanager.Register, so this must come after it.
func (a *UpgradeAgent) register() {
	observeNodeStatus(a.ready.observe)
	taskexecutor.Register(taskexecutor.TaskUpgrade, &upgradeExecutor{jobs: a.jobs, node: a.nodeName, checks: map[string]upgrade.Request{}})
	r, h := nodeUpgradeJobRunner(a.ctx, a.jobs, a.kubeedge, a.statuses)
	actions.RegisterRunner(operationsv1alpha2.ResourceNodeUpgradeJob, r)
	a.confirmations = h
	a.cloudJobs.register()
}

// Watch finishes an upgrade left in progress (this process may be the new
// version the upgrade waits for, or the old one it restored): it writes
// its health record, starts a new driver if its own died, and reports to
// the cloud. It returns at once; the work goes on in the background until
// ctx ends.
func (a *UpgradeAgent) Watch(ctx context.Context) {
	go a.node.Watch(ctx)
	go upgrade.FollowUnholds(ctx, a.jobs.Env, a.ready.Ready, a.release, klog.Infof)
	// A job that waited for confirmation when edgecore stopped waits on.
	if a.confirmations != nil {
		if w, err := upgrade.LoadWaiting(a.jobs.Env); err != nil {
			klog.Warningf("NodeUpgradeJob confirmation: %v", err)
		} else if w != nil {
			klog.Infof("NodeUpgradeJob %s waits for confirmation since %s; run `edgecore.exe upgrade confirm` as an administrator to upgrade to %s", w.Job, w.Since.Format(time.RFC3339), w.Version)
			a.confirmations.awaitConfirmation()
		}
	}
}

// upgradeExecutor answers the cloud's NodeUpgradeJob steps (task type
// "upgrade") on Windows, through the service rather than keadm.
type upgradeExecutor struct {
	jobs *upgrade.Jobs
	node string
	mu   sync.Mutex
	// checks remembers each task's request from its Init step: the
	// Checking step's message carries only the check items.
	checks map[string]upgrade.Request
}

func (x *upgradeExecutor) Name() string { return taskexecutor.TaskUpgrade }

// Do runs the step req.State names. An event with no Action tells
// upstream's task handler that the result is reported later.
func (x *upgradeExecutor) Do(req commontypes.NodeTaskRequest) (fsm.Event, error) {
	job := upgrade.Job{TaskID: req.TaskID, TaskType: req.Type, Node: x.node}
	var (
		r   upgrade.Report
		now bool
	)
	switch api.State(req.State) {
	case "", api.TaskInit, api.UpgradingState:
		var ur commontypes.NodeUpgradeJobRequest
		if err := itemAs(req.Item, &ur); err != nil {
			return fsm.Event{}, err
		}
		ureq := upgrade.Request{Job: job, Version: ur.Version, Digest: ur.ImageDigest, RequireConfirmation: ur.RequireConfirmation}
		x.mu.Lock()
		x.checks[req.TaskID] = ureq
		x.mu.Unlock()
		if api.State(req.State) == api.UpgradingState {
			r, now = x.jobs.Upgrade(ureq)
		} else {
			r, now = x.jobs.Init(ureq)
		}
	case api.TaskChecking:
		var cr commontypes.NodePreCheckRequest
		if err := itemAs(req.Item, &cr); err != nil {
			return fsm.Event{}, err
		}
		x.mu.Lock()
		ureq, ok := x.checks[req.TaskID]
		x.mu.Unlock()
		if !ok {
			ureq = upgrade.Request{Job: job}
		}
		r, now = x.jobs.Check(ureq, cr.CheckItem), true
	case api.BackingUpState:
		r, now = x.jobs.Backup(upgrade.Request{Job: job})
	case api.RollingBackState:
		r, now = x.jobs.Rollback(upgrade.Request{Job: job})
	default:
		return fsm.Event{}, fmt.Errorf("NodeUpgradeJob step %q is not one edgecore for Windows knows", req.State)
	}
	if !now {
		return fsm.Event{Type: "Upgrade"}, nil
	}
	return eventOf(r), nil
}

func eventOf(r upgrade.Report) fsm.Event {
	e := fsm.Event{Type: r.Event, Action: api.ActionSuccess, Msg: r.Reason}
	if !r.Success {
		e.Action = api.ActionFailure
	}
	return e
}

// itemAs decodes a task request's item, which arrives as decoded JSON.
func itemAs(item any, v any) error {
	data, err := json.Marshal(item)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// sendTaskReport reports a step's result the way upstream's task handler
// does, through edgehub to the cloud's task manager: a v1alpha2 job's as
// node action statuses, a v1alpha1 task's as a task result.
func sendTaskReport(ctx context.Context, node string, statuses jobStatuses) func(upgrade.Job, upgrade.Report) {
	return func(j upgrade.Job, r upgrade.Report) {
		name := j.Node
		if name == "" {
			name = node
		}
		if j.TaskType == configJobType {
			statuses.sendAll(ctx, jobResource(configJobType, j.TaskID, name), configJobMessages(r))
			return
		}
		if j.TaskType == nodeJobType {
			statuses.sendAll(ctx, nodeJobResource(j.TaskID, name), nodeJobMessages(r))
			return
		}
		e := eventOf(r)
		commonmsg.ReportTaskResult(j.TaskType, j.TaskID, commontypes.NodeTaskResponse{
			NodeName: name, Event: e.Type, Action: e.Action, Reason: e.Msg, Time: time.Now().UTC().Format(time.RFC3339),
		})
	}
}

// upstreamCheckItems runs upstream's check of the cpu and mem items and
// returns those that failed.
func upstreamCheckItems(items []string) map[string]string {
	check := taskexecutor.CommonMethods[string(api.TaskChecking)]
	if check == nil {
		return nil
	}
	ev := check(commontypes.NodeTaskRequest{Item: commontypes.NodePreCheckRequest{CheckItem: items}})
	if ev.Action != api.ActionFailure {
		return nil
	}
	results := map[string]string{}
	if err := json.Unmarshal([]byte(ev.Msg), &results); err != nil {
		return map[string]string{"check": ev.Msg}
	}
	failed := map[string]string{}
	for k, v := range results {
		if v != "ok" {
			failed[k] = v
		}
	}
	return failed
}

// nodeReadiness is what the kubelet last reported about the node and the
// cloud accepted: edgecore's own view of "the node is Ready".
type nodeReadiness struct {
	mu    sync.Mutex
	ready bool
}

func (r *nodeReadiness) Ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready
}

// observe takes the answer to a node status update: the node as the cloud
// stored it, or the error that kept it from the cloud.
func (r *nodeReadiness) observe(n *v1.Node, err error) {
	ready := false
	if err == nil && n != nil {
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady {
				ready = c.Status == v1.ConditionTrue
			}
		}
	}
	r.mu.Lock()
	r.ready = ready
	r.mu.Unlock()
}

var observeOnce sync.Once

// observeNodeStatus hands every node status update the kubelet makes, and
// its answer, to observe. The kubelet updates the status through its
// heartbeat client (a PATCH of the node's status subresource), which
// edged bridges to the cloud; edged's DefaultRunLiteKubelet is the hook
// to reach the kubelet's dependencies before it starts.
func observeNodeStatus(observe func(*v1.Node, error)) {
	observeOnce.Do(func() {
		run := edged.DefaultRunLiteKubelet
		edged.DefaultRunLiteKubelet = func(ctx context.Context, s *kubeletoptions.KubeletServer, deps *kubelet.Dependencies, fg featuregate.FeatureGate) error {
			if deps != nil && deps.HeartbeatClient != nil {
				deps.HeartbeatClient = statusObserver{Interface: deps.HeartbeatClient, observe: observe}
			}
			return run(ctx, s, deps, fg)
		}
	})
}

// statusObserver is a clientset whose node status patches are observed;
// everything else passes through.
type statusObserver struct {
	kubernetes.Interface
	observe func(*v1.Node, error)
}

func (c statusObserver) CoreV1() corev1.CoreV1Interface {
	return coreObserver{CoreV1Interface: c.Interface.CoreV1(), observe: c.observe}
}

type coreObserver struct {
	corev1.CoreV1Interface
	observe func(*v1.Node, error)
}

func (c coreObserver) Nodes() corev1.NodeInterface {
	return nodesObserver{NodeInterface: c.CoreV1Interface.Nodes(), observe: c.observe}
}

type nodesObserver struct {
	corev1.NodeInterface
	observe func(*v1.Node, error)
}

func (n nodesObserver) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Node, error) {
	node, err := n.NodeInterface.Patch(ctx, name, pt, data, opts, subresources...)
	if len(subresources) == 1 && subresources[0] == "status" {
		n.observe(node, err)
	}
	return node, err
}
