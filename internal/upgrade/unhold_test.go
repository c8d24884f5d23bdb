package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(ns, name string, annotated bool, phase corev1.PodPhase) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.PodStatus{Phase: phase}}
	if annotated {
		p.Annotations = map[string]string{HoldUpgradeAnnotation: "true"}
	}
	return p
}

// nodePods is what the node's database holds in these tests: two pods
// the node holds and three it does not.
func nodePods() []corev1.Pod {
	deleting := pod("default", "leaving", true, corev1.PodPending)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return []corev1.Pod{
		pod("default", "web-2", true, corev1.PodPending),
		pod("default", "web-1", true, corev1.PodPending),
		pod("shop", "plc", true, corev1.PodRunning),
		pod("default", "db", false, corev1.PodPending),
		deleting,
	}
}

// unholdHost is a host whose running edgecore takes requests as it
// would, ready or not, recording what it hands to edged.
type unholdHost struct {
	*host
	e        Env
	f        Facts
	ready    bool
	released []string
}

func newUnholdHost(pods []corev1.Pod) *unholdHost {
	h := &unholdHost{host: newHost(newBin), ready: true}
	h.e = h.env(4000, "v0.1.0")
	h.f = h.facts()
	h.f.Pods = func(ds string) ([]corev1.Pod, error) {
		if ds != h.db {
			return nil, fmt.Errorf("read %s, want the service's database %s", ds, h.db)
		}
		return pods, nil
	}
	// The node's follower, one poll per tick of the clock.
	h.clock.onTick = append(h.clock.onTick, func() {
		if !h.ready {
			return
		}
		keys, err := TakeUnhold(h.e)
		if err != nil {
			panic(err)
		}
		h.released = append(h.released, keys...)
	})
	return h
}

func TestUnholdReleasesNamedPodsOnce(t *testing.T) {
	h := newUnholdHost(nodePods())
	o := *NewUnholdOptions()
	o.Pods = []string{"web-1", "default/web-2", "web-1"}
	var out bytes.Buffer
	if err := Unhold(context.Background(), &out, h.e, h.f, o); err != nil {
		t.Fatalf("unhold: %v\n%s", err, out.String())
	}
	if got := strings.Join(h.released, " "); got != "default/web-1 default/web-2" {
		t.Fatalf("edgecore released %q, want default/web-1 default/web-2, each once", got)
	}
	for _, want := range []string{"Asked edgecore to release default/web-1, default/web-2.", "edgecore handed them to the kubelet", "kubectl get pod -n default web-2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, ok := h.fs.get(h.e.Paths.Unhold); ok {
		t.Errorf("the request %s is left after edgecore took it", h.e.Paths.Unhold)
	}
}

// A pod the node does not hold is refused with upstream metaserver's
// reasons, and nothing is asked of edgecore.
func TestUnholdRefusesPodsTheNodeDoesNotHold(t *testing.T) {
	for _, c := range []struct {
		pod, ns string
		want    string
	}{
		{"plc", "shop", `POD: Invalid value: "shop/plc": the pod is Running: the node holds only a pod that has not started (Pending)`},
		{"db", "default", `"default/db": the pod does not carry the annotation edge.kubeedge.io/hold-upgrade: "true"`},
		{"leaving", "default", `"default/leaving": the pod is being deleted`},
		{"nope", "default", `POD: Not found: "default/nope"`},
	} {
		t.Run(c.pod, func(t *testing.T) {
			h := newUnholdHost(nodePods())
			o := *NewUnholdOptions()
			o.Pods, o.Namespace = []string{c.pod}, c.ns
			var out bytes.Buffer
			err := Unhold(context.Background(), &out, h.e, h.f, o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			// The operator learns what the node does hold.
			if !strings.Contains(err.Error(), "the node holds default/web-1, default/web-2") || !strings.Contains(err.Error(), h.db) {
				t.Errorf("err %v does not name the held pods and the database", err)
			}
			if _, ok := h.fs.get(h.e.Paths.Unhold); ok || len(h.released) > 0 || out.Len() > 0 {
				t.Errorf("a refused request reached edgecore: file %v, released %v, output %q", ok, h.released, out.String())
			}
		})
	}
}

func TestUnholdAll(t *testing.T) {
	h := newUnholdHost(nodePods())
	o := *NewUnholdOptions()
	o.All = true
	var out bytes.Buffer
	if err := Unhold(context.Background(), &out, h.e, h.f, o); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.released, " "); got != "default/web-1 default/web-2" {
		t.Fatalf("--all released %q, want the two held pods", got)
	}

	none := newUnholdHost([]corev1.Pod{pod("shop", "plc", true, corev1.PodRunning)})
	out.Reset()
	if err := Unhold(context.Background(), &out, none.e, none.f, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "No pod on this node is held") {
		t.Errorf("output %q", out.String())
	}
	if _, ok := none.fs.get(none.e.Paths.Unhold); ok {
		t.Error("a request was written with nothing to release")
	}
}

// While the node is not Ready (or edgecore does not run) the request
// waits in its file; a second one adds to it; the node takes both once
// Ready.
func TestUnholdWaitsForTheNode(t *testing.T) {
	h := newUnholdHost(nodePods())
	h.ready = false
	o := *NewUnholdOptions()
	o.Pods, o.Timeout = []string{"web-1"}, 5*time.Second
	var out bytes.Buffer
	err := Unhold(context.Background(), &out, h.e, h.f, o)
	if err == nil || !strings.Contains(err.Error(), "has not taken the request within 5s") || !strings.Contains(err.Error(), h.e.Paths.Unhold) || !strings.Contains(err.Error(), "Ready") {
		t.Fatalf("err %v", err)
	}
	o.Pods = []string{"web-2", "web-1"}
	_ = Unhold(context.Background(), &out, h.e, h.f, o)
	h.ready = true
	h.clock.Sleep(context.Background(), poll)
	if got := strings.Join(h.released, " "); got != "default/web-1 default/web-2" {
		t.Fatalf("released %q once Ready, want both requests' pods once each", got)
	}
}

func TestFollowUnholds(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	ready := false
	var released, logs []string
	ctx, cancel := context.WithCancel(context.Background())
	ticks := 0
	h.clock.onTick = append(h.clock.onTick, func() {
		ticks++
		switch ticks {
		case 1:
			h.fs.put(e.Paths.Unhold, []byte(`{"pods":["default/web-1","../etc/x","Shop/plc"]}`))
		case 3:
			ready = true
		case 5:
			h.fs.put(e.Paths.Unhold, []byte(`{`))
		case 7:
			cancel()
		}
	})
	FollowUnholds(ctx, e, func() bool { return ready }, func(ns, name string) { released = append(released, ns+"/"+name) },
		func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	if strings.Join(released, " ") != "default/web-1" {
		t.Fatalf("released %v, want default/web-1 only", released)
	}
	all := strings.Join(logs, "\n")
	for _, want := range []string{"../etc/x in " + e.Paths.Unhold, `namespace "Shop"`, "is not a request to release held pods", "Releasing the held updates of pod default/web-1"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q:\n%s", want, all)
		}
	}
	if _, ok := h.fs.get(e.Paths.Unhold); ok {
		t.Error("a broken request file is kept: it would be reported every second")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("returned before the node stopped")
	}
}

func TestUnholdOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*UnholdOptions)
		want string
	}{
		{"both", func(o *UnholdOptions) { o.All, o.Pods = true, []string{"web-1"} }, `--all: Invalid value: "web-1": give either pod names or --all`},
		{"none", func(o *UnholdOptions) {}, "POD: Required value: name the pods to release"},
		{"namespace", func(o *UnholdOptions) { o.Pods, o.Namespace = []string{"web-1"}, "Shop" }, `--namespace: Invalid value: "Shop"`},
		{"name", func(o *UnholdOptions) { o.Pods = []string{"web_1"} }, `POD: Invalid value: "web_1"`},
		{"timeout", func(o *UnholdOptions) { o.All, o.Timeout = true, 0 }, `--timeout: Invalid value: "0s"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := NewUnholdOptions()
			c.edit(o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
	o := NewUnholdOptions()
	o.Pods = []string{"web-1", "shop/plc"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestHeldIsUpstreamsRule(t *testing.T) {
	for _, p := range nodePods() {
		want := p.Name == "web-1" || p.Name == "web-2"
		if got := Held(&p); got != want {
			t.Errorf("Held(%s/%s) = %v, want %v", p.Namespace, p.Name, got, want)
		}
	}
	other := pod("default", "x", false, corev1.PodPending)
	other.Annotations = map[string]string{HoldUpgradeAnnotation: "True"}
	if Held(&other) {
		t.Error(`an annotation other than "true" holds the pod; upstream's edged compares the string`)
	}
}
