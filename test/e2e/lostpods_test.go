//go:build e2e

// Pods cloudcore never tells the node about. The chaos harness found a pod
// left Terminating for good after a cloudcore restart, at our node and the
// reference alike, that the node's database and runtime never had: a pod
// created and deleted while cloudcore was down comes back, when cloudcore
// starts, as one update its hub forwards without the record (ObjectSync)
// its sync loop resends from, into the node's message queue, which the
// node's connection replaces when it comes: the message is gone, and no
// node ever confirms the deletion. This scenario makes that happen on
// purpose and checks that our node lists its pods from the cloud when it
// connects and mends it (internal/podrelist).

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// lostPods runs the scenario for node binary bin and returns the node and
// the pods still Terminating in the cloud, and the other disagreements of
// the cloud, the runtime and the node's database, after bound.
func lostPods(t *testing.T, name, bin string, bound time.Duration) (*chaosNode, []string) {
	t.Helper()
	// The node lists through dynamicController, which the node's Services
	// need too (docs/networks.md).
	c := startClusterWith(t, cluster{dynamicController: true})
	n := startChaosNode(t, c, "linux", name, bin, nil)
	churn := newChaosChurn(t, n, 1, 0)
	if _, v, ok := n.converge(2*time.Minute + podBound); !ok {
		fatalf(t, "node %s never converged before cloudcore went down: %s", name, strings.Join(v.all(), "; "))
	}
	ctx := context.Background()
	pods := c.client.CoreV1().Pods(n.ns)

	// The node away (its link cut) while cloudcore is down, and until
	// cloudcore, started again, has handed its hub every pod.
	n.link.set(linkCut, 0)
	c.cloudcore.kill()
	for _, p := range []string{"created-while-down", "deleted-while-down"} {
		if _, err := pods.Create(ctx, churn.pod(p, 0, 0), metav1.CreateOptions{}); err != nil {
			fatal(t, err)
		}
	}
	if err := pods.Delete(ctx, "deleted-while-down", metav1.DeleteOptions{}); err != nil {
		fatal(t, err)
	}
	if p, err := pods.Get(ctx, "deleted-while-down", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		fatalf(t, "the deleted pod bound to the node should wait for the node's confirmation, Terminating: %v, %v", p, err)
	}
	created, err := pods.Get(ctx, "created-while-down", metav1.GetOptions{})
	if err != nil {
		fatal(t, err)
	}
	c.restartCloudcore(t)
	// cloudcore's hub keeps a record (ObjectSync) of each object it queued
	// for a node: once the created pod has one, the hub has taken
	// cloudcore's first events of both pods, the deleted one's without a
	// record, into the queue the node's connection will replace.
	dyn, err := dynamic.NewForConfig(c.rest)
	if err != nil {
		fatal(t, err)
	}
	syncs := dyn.Resource(schema.GroupVersionResource{Group: "reliablesyncs.kubeedge.io", Version: "v1alpha1", Resource: "objectsyncs"}).Namespace(n.ns)
	eventually(t, time.Minute, "cloudcore's hub queued the pod created while it was down", func() (bool, error) {
		_, err := syncs.Get(ctx, n.e.name+"."+string(created.UID), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	time.Sleep(2 * time.Second)
	n.link.set(linkUp, 0)

	_, v, ok := n.converge(bound)
	if ok {
		return n, nil
	}
	return n, v.all()
}

// TestLinuxPodsLostByCloudcore: our node confirms the deletion of a pod
// created and deleted while cloudcore was down, and runs the pod created
// then, once it connects again.
func TestLinuxPodsLostByCloudcore(t *testing.T) {
	n, left := lostPods(t, "lost-pods", mustEnv(t, "EDGECORE_BIN"), 2*time.Minute)
	for _, l := range left {
		errorf(t, "after cloudcore lost the node's messages: %s", l)
	}
	if _, err := n.c.client.CoreV1().Pods(n.ns).Get(context.Background(), "deleted-while-down", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		errorf(t, "the pod deleted while cloudcore was down is still in the cloud: %v", err)
	}
	// Mended by the node's list, not by chance: its log says so.
	for _, want := range []string{
		`"The cloud's list of the node's pods brings the node a pod" pod="lost-pods/deleted-while-down"`,
		`reason="the node never received it"`,
	} {
		if !n.e.edgecore.logContains(want) {
			errorf(t, "the node's log has no %s (%s)", want, n.e.edgecore.log)
		}
	}
}
