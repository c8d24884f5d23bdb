package modules

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/core"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/beehive/pkg/core/model"
	edgectrconst "github.com/kubeedge/kubeedge/cloud/pkg/edgecontroller/constants"
	connect "github.com/kubeedge/kubeedge/edge/pkg/common/cloudconnection"
	edgemodules "github.com/kubeedge/kubeedge/edge/pkg/common/modules"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao/dbclient"
	"github.com/kubeedge/kubeedge/pkg/metaserver"

	"github.com/kubeedge-windows/edgecore/internal/podrelist"
)

const podRelistModuleName = "podrelist"

// podsKey is dynamicController's key for pods of every namespace.
const podsKey = "/core/v1/pods/null/null"

// relistEvery is how often a connected node lists its pods again: what a
// lost message left wrong is mended within it even when the connection
// never drops.
const relistEvery = 5 * time.Minute

// podRelister lists the node's pods from the cloud each time the node
// connects, and every relistEvery while it stays connected, and hands
// metamanager, as cloudcore's own messages, what the list shows the
// node's database lacks or holds no longer (podrelist.Decide says why
// that is needed).
type podRelister struct {
	node string
	// send asks the cloud and waits for its answer (sendToCloud).
	send      func(model.Message) (model.Message, error)
	connected func() bool
	// local reads the pods of the node's database.
	local func() ([]corev1.Pod, error)
	// hand gives metamanager a message as from cloudcore.
	hand func(model.Message)
	// report records why the node cannot list its pods ("" once it can)
	// for `service status`; nil for nowhere.
	report func(problem string)
	// poll is how often the connection is looked at (2 s when zero);
	// every is relistEvery when zero.
	poll, every time.Duration
}

func (r *podRelister) run(ctx context.Context) {
	poll, every := r.poll, r.every
	if poll == 0 {
		poll = 2 * time.Second
	}
	if every == 0 {
		every = relistEvery
	}
	due, failures, lastErr := true, 0, ""
	var listedAt, retryAt time.Time
	for {
		switch {
		case !r.connected():
			// The next connection starts with a list.
			due, retryAt = true, time.Time{}
		case (due || time.Since(listedAt) >= every) && !time.Now().Before(retryAt):
			if err := r.relist(ctx); err != nil {
				if msg := err.Error(); msg != lastErr {
					klog.ErrorS(err, "The node cannot list its pods from the cloud: a pod whose message cloudcore lost stays unknown to the node "+
						"(one deleted meanwhile stays Terminating) until it can")
					lastErr = msg
				}
				retryAt = time.Now().Add(resubscribeAfter[min(failures, len(resubscribeAfter)-1)])
				failures++
				r.tell(err.Error())
			} else {
				due, failures, lastErr, listedAt = false, 0, "", time.Now()
				r.tell("")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

func (r *podRelister) tell(problem string) {
	if r.report != nil {
		r.report(problem)
	}
}

// relist lists the node's pods from the cloud once and hands metamanager
// what they show.
func (r *podRelister) relist(ctx context.Context) error {
	body, err := askCloud(ctx, r.send, r.node, podsKey, metaserver.List, metav1.ListOptions{FieldSelector: "spec.nodeName=" + r.node},
		// dynamicController lists with cloudcore's own account: its
		// requireAuthorization checks a node's watches, not its lists.
		"cloudcore lists pods with its own account, which needs list on pods; its log says why it failed")
	if err != nil {
		return fmt.Errorf("listing the node's pods: %w", err)
	}
	var list struct {
		Metadata metav1.ListMeta `json:"metadata"`
		Items    []corev1.Pod    `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("the cloud's list of the node's pods: %w", err)
	}
	// The API server answers the field selector; a pod of another node
	// is never the node's to run or delete, whatever the answer holds.
	mine := list.Items[:0]
	for _, p := range list.Items {
		if p.Spec.NodeName == r.node {
			mine = append(mine, p)
		}
	}
	list.Items = mine
	// After the list: what reached the database before this read is not
	// mistaken for something the node lacks. A cloud message still queued
	// at metamanager, newer than the list, may yet be overwritten by an
	// older copy handed below; the next list (relistEvery) mends that.
	local, err := r.local()
	if err != nil {
		return fmt.Errorf("reading the node's pods: %w", err)
	}
	plan := podrelist.Decide(list.Items, list.Metadata.ResourceVersion, local)
	for _, c := range plan.Remove {
		klog.InfoS("The cloud's list of the node's pods drops a pod from the node", "pod", klog.KObj(c.Pod), "uid", c.Pod.UID, "reason", c.Why)
		r.hand(podMessage(c.Pod, model.DeleteOperation))
	}
	for _, c := range plan.Deliver {
		klog.InfoS("The cloud's list of the node's pods brings the node a pod", "pod", klog.KObj(c.Pod), "uid", c.Pod.UID, "reason", c.Why)
		r.hand(podMessage(c.Pod, model.UpdateOperation))
	}
	klog.V(2).InfoS("Listed the node's pods from the cloud", "pods", len(list.Items), "resourceVersion", list.Metadata.ResourceVersion,
		"delivered", len(plan.Deliver), "removed", len(plan.Remove), "newerThanList", plan.Kept)
	return nil
}

// podMessage is the message cloudcore's edgecontroller sends a node for
// pod p and op, as metamanager takes it from the hub: metamanager stores
// or deletes the pod, tells edged and acknowledges to the cloud.
func podMessage(p *corev1.Pod, op string) model.Message {
	m := model.NewMessage("").
		BuildRouter(metamanager.CloudControllerModel, edgectrconst.GroupResource, p.Namespace+"/"+model.ResourceTypePod+"/"+p.Name, op).
		SetResourceVersion(p.ResourceVersion).
		FillBody(p)
	return *m
}

// localPods reads the pods of metamanager's table.
func localPods() ([]corev1.Pod, error) {
	rows, err := dbclient.NewMetaService().QueryMeta("type", model.ResourceTypePod)
	if err != nil {
		return nil, err
	}
	pods := make([]corev1.Pod, 0, len(*rows))
	for _, row := range *rows {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(row), &p); err != nil {
			// Taken as missing: the cloud's copy replaces it.
			klog.ErrorS(err, "A pod of the node's database cannot be read")
			continue
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// podRelistModule runs the relister on the bus.
type podRelistModule struct {
	node   string
	status *hubStatus
}

func (*podRelistModule) Name() string                             { return podRelistModuleName }
func (*podRelistModule) Group() string                            { return podRelistModuleName }
func (*podRelistModule) Enable() bool                             { return true }
func (*podRelistModule) RestartPolicy() *core.ModuleRestartPolicy { return nil }

func (m *podRelistModule) Start() {
	r := &podRelister{node: m.node, send: sendToCloud, connected: connect.IsConnected, local: localPods,
		hand: func(msg model.Message) { beehiveContext.Send(edgemodules.MetaManagerModuleName, msg) }, report: m.status.recordPods}
	r.run(beehiveContext.GetContext())
}
