package podrelist

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pod(name, uid, rv string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "line3", Name: name, UID: types.UID(uid), ResourceVersion: rv, Labels: map[string]string{"gen": "1"}},
		Spec:       corev1.PodSpec{NodeName: "ipc-7", Containers: []corev1.Container{{Name: "app", Image: "pause"}}},
	}
}

// names renders changes as "name(uid): why" for comparison.
func names(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Pod.Name+"("+string(c.Pod.UID)+"): "+c.Why)
	}
	return strings.Join(out, "; ")
}

func TestDecide(t *testing.T) {
	deleting := pod("deleting", "u-del", "120")
	now := metav1.NewTime(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
	deleting.DeletionTimestamp = &now
	statusOnly := pod("status-only", "u-st", "130")
	statusOnly.Status.Phase = corev1.PodRunning
	statusOnly.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "cloudcore", Subresource: "status"}}
	relabelled := pod("relabelled", "u-rl", "140")
	relabelled.Labels["gen"] = "2"
	newerAtNode := pod("newer-at-node", "u-nn", "90")
	newerAtNode.Labels["gen"] = "0"

	cloud := []corev1.Pod{
		pod("never-sent", "u-new", "110"),
		deleting,
		statusOnly,
		relabelled,
		pod("same", "u-same", "100"),
		pod("replaced", "u-two", "115"),
		newerAtNode,
	}
	local := []corev1.Pod{
		pod("deleting", "u-del", "60"),
		pod("status-only", "u-st", "70"),
		pod("relabelled", "u-rl", "80"),
		pod("same", "u-same", "100"),
		pod("replaced", "u-one", "50"),
		pod("newer-at-node", "u-nn", "95"),
		pod("gone", "u-gone", "40"),
		pod("gone-at-list", "u-gl", "150"),
		pod("came-after-list", "u-after", "151"),
	}
	got := Decide(cloud, "150", local)

	if want := "replaced(u-one): the cloud has another pod of that name; gone(u-gone): the cloud no longer has it; gone-at-list(u-gl): the cloud no longer has it"; names(got.Remove) != want {
		t.Errorf("Remove = %q\nwant      %q", names(got.Remove), want)
	}
	if want := "never-sent(u-new): the node never received it; deleting(u-del): the node never received its deletion; " +
		"relabelled(u-rl): the node holds an older copy; replaced(u-two): it replaced a pod of the same name"; names(got.Deliver) != want {
		t.Errorf("Deliver = %q\nwant       %q", names(got.Deliver), want)
	}
	if got.Kept != 1 {
		t.Errorf("Kept = %d, want 1 (came-after-list, newer than the list)", got.Kept)
	}
	// The delivered pods are the cloud's copies, not the node's.
	for _, c := range got.Deliver {
		if c.Pod.Name == "deleting" && c.Pod.DeletionTimestamp == nil {
			t.Error("the delivered copy of a deleted pod has no deletion timestamp: the node would not stop it")
		}
	}
}

// Versions that are not numbers: a missing pod is still delivered, but no
// pod is taken as older, newer or gone.
func TestDecideVersionsNotNumbers(t *testing.T) {
	changed := pod("changed", "u-c", "b")
	changed.Labels["gen"] = "2"
	cloud := []corev1.Pod{pod("missing", "u-m", "x"), changed}
	local := []corev1.Pod{pod("changed", "u-c", "a"), pod("unlisted", "u-u", "y")}
	got := Decide(cloud, "z", local)
	if names(got.Deliver) != "missing(u-m): the node never received it" || len(got.Remove) != 0 || got.Kept != 1 {
		t.Errorf("Decide = deliver %q, remove %q, kept %d; want only missing delivered, unlisted kept", names(got.Deliver), names(got.Remove), got.Kept)
	}
}

func TestDecideNothingToDo(t *testing.T) {
	p := pod("a", "u-a", "10")
	if got := Decide([]corev1.Pod{p}, "12", []corev1.Pod{p}); len(got.Deliver)+len(got.Remove)+got.Kept != 0 {
		t.Errorf("Decide of equal sides = %+v, want nothing", got)
	}
	if got := Decide(nil, "12", nil); len(got.Deliver)+len(got.Remove) != 0 {
		t.Errorf("Decide of empty sides = %+v, want nothing", got)
	}
}
