// Package podrelist decides how the node's database of pods catches up
// with the cloud's list of the pods bound to the node.
//
// cloudcore tells a node about its pods by messages, and some are lost for
// good: a node's message queue at cloudcore is replaced when the node
// connects, so what cloudcore queued for it while it was away (its
// informers' first events after a cloudcore restart among them) never
// leaves; a pod created and deleted while cloudcore was down comes back
// as one update that cloudcore forwards without the record (ObjectSync)
// from which its sync loop would send it again. Such a pod stays
// Terminating in the cloud forever: no node ever confirms its deletion.
// A kubelet that lost its watch lists its pods again; a KubeEdge node
// asks for the list through cloudcore's dynamicController, and this
// package says what of it the node must take.
package podrelist

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// Change is one pod the node's database must take or drop, and why.
type Change struct {
	Pod *corev1.Pod
	Why string
}

// Plan is what the node does with a list: Remove first (pods the cloud no
// longer has, or replaced by another pod of the same name), then Deliver
// (the cloud's pods the node lacks or holds an older copy of), each as
// cloudcore's own delete and update messages would have done.
type Plan struct {
	Remove, Deliver []Change
	// Kept are the node's pods newer than the list (they came after it):
	// the list says nothing about them.
	Kept int
}

// Decide compares cloud, the cloud's list of the node's pods at resource
// version listRV, with local, the pods of the node's database.
//
// A pod the database lacks, or holds with another UID, is delivered; one
// it holds in an older version than the cloud's whose metadata or spec
// differ (what cloudcore would have sent; a status alone it does not
// send) is delivered too. A pod of the database the list does not have is
// removed only when its version is not newer than the list's: a newer
// one reached the node after the list was taken. Versions that are not
// numbers (no API server of this project's cloud writes such) are never
// taken as older or newer: such a pod is delivered only when missing and
// never removed.
func Decide(cloud []corev1.Pod, listRV string, local []corev1.Pod) Plan {
	var p Plan
	type key struct{ ns, name string }
	have := map[key]*corev1.Pod{}
	for i := range local {
		have[key{local[i].Namespace, local[i].Name}] = &local[i]
	}
	listed := map[key]bool{}
	for i := range cloud {
		c := &cloud[i]
		k := key{c.Namespace, c.Name}
		listed[k] = true
		l, ok := have[k]
		switch {
		case !ok:
			p.Deliver = append(p.Deliver, Change{c, "the node never received it"})
		case l.UID != c.UID:
			p.Remove = append(p.Remove, Change{l, "the cloud has another pod of that name"})
			p.Deliver = append(p.Deliver, Change{c, "it replaced a pod of the same name"})
		case older(l.ResourceVersion, c.ResourceVersion) && differs(l, c):
			why := "the node holds an older copy"
			if c.DeletionTimestamp != nil && l.DeletionTimestamp == nil {
				why = "the node never received its deletion"
			}
			p.Deliver = append(p.Deliver, Change{c, why})
		}
	}
	for i := range local {
		l := &local[i]
		if _, ok := listed[key{l.Namespace, l.Name}]; ok {
			continue // the same pod, or one replaced: judged above
		}
		if !atMost(l.ResourceVersion, listRV) {
			p.Kept++
			continue
		}
		p.Remove = append(p.Remove, Change{l, "the cloud no longer has it"})
	}
	return p
}

// versions reads two resource versions as numbers (etcd revisions, as
// cloudcore itself compares them); ok is false unless both are.
func versions(a, b string) (x, y uint64, ok bool) {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return x, y, err1 == nil && err2 == nil
}

// older says whether version a is older than b.
func older(a, b string) bool {
	x, y, ok := versions(a, b)
	return ok && x < y
}

// atMost says whether version a is not newer than b.
func atMost(a, b string) bool {
	x, y, ok := versions(a, b)
	return ok && x <= y
}

// differs says whether the cloud's copy changes what cloudcore sends a
// node for: the metadata (but its version, generation and field owners,
// which every status write moves) and the spec.
func differs(local, cloud *corev1.Pod) bool {
	l, c := local.ObjectMeta.DeepCopy(), cloud.ObjectMeta.DeepCopy()
	l.ResourceVersion, c.ResourceVersion = "", ""
	l.Generation, c.Generation = 0, 0
	l.ManagedFields, c.ManagedFields = nil, nil
	return !apiequality.Semantic.DeepEqual(*l, *c) || !apiequality.Semantic.DeepEqual(local.Spec, cloud.Spec)
}
