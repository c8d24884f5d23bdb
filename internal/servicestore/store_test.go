package servicestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func svc(ns, name, rv string, lbls map[string]string) *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: lbls},
		Spec:       v1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []v1.ServicePort{{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP}}},
	}
}

func slice(ns, name, service, rv string, ips ...string) *discoveryv1.EndpointSlice {
	e := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, ip := range ips {
		e.Endpoints = append(e.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
	}
	return e
}

func mustApply(t *testing.T, s *Store, typ watch.EventType, obj runtime.Object) {
	t.Helper()
	if err := s.Apply(typ, obj); err != nil {
		t.Fatal(err)
	}
}

func TestApplyIndexesSlicesByServiceAndCounts(t *testing.T) {
	s := New(Limits{})
	mustApply(t, s, watch.Added, svc("default", "web", "1", nil))
	mustApply(t, s, watch.Added, slice("default", "web-a", "web", "2", "10.244.1.5"))
	mustApply(t, s, watch.Added, slice("default", "web-b", "web", "3", "10.244.2.5"))
	if got := s.EndpointSlices("default", "web"); len(got) != 2 || got[0].Name != "web-a" || got[1].Name != "web-b" {
		t.Fatalf("slices of default/web: %v", got)
	}
	mustApply(t, s, watch.Deleted, slice("default", "web-a", "web", "4"))
	if got := s.EndpointSlices("default", "web"); len(got) != 1 || got[0].Name != "web-b" {
		t.Fatalf("after deleting web-a: %v", got)
	}
	if _, ok := s.Service("default", "web"); !ok {
		t.Fatal("default/web not found")
	}
	st := s.Stats()
	if st.Services != 1 || st.EndpointSlices != 1 || st.Revision != 4 {
		t.Fatalf("stats %+v", st)
	}
	// The same object again (a resend after a reconnection) is no change.
	mustApply(t, s, watch.Added, svc("default", "web", "1", nil))
	if s.Stats().Revision != 4 {
		t.Fatalf("a resend of the same version was recorded as a change: revision %d", s.Stats().Revision)
	}
	// An older version (read from the database after a newer one came
	// from the cloud) does not replace it.
	mustApply(t, s, watch.Modified, svc("default", "web", "9", nil))
	mustApply(t, s, watch.Added, svc("default", "web", "5", nil))
	if got, _ := s.Service("default", "web"); got.ResourceVersion != "9" {
		t.Fatalf("version %s replaced version 9", got.ResourceVersion)
	}
}

func TestLimitsRefuseNewObjectsButNotUpdates(t *testing.T) {
	s := New(Limits{Services: 2, EndpointSlices: 1})
	mustApply(t, s, watch.Added, svc("a", "one", "1", nil))
	mustApply(t, s, watch.Added, svc("a", "two", "2", nil))
	err := s.Apply(watch.Added, svc("a", "three", "3", nil))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != 2 || le.Key.Name != "three" {
		t.Fatalf("third Service: %v", err)
	}
	mustApply(t, s, watch.Modified, svc("a", "two", "4", nil))
	if err := s.Apply(watch.Added, slice("a", "x", "one", "5")); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(watch.Added, slice("a", "y", "one", "6")); err == nil {
		t.Fatal("second EndpointSlice kept past the limit of 1")
	}
	if st := s.Stats(); st.RefusedServices != 1 || st.RefusedEndpointSlices != 1 || st.Services != 2 {
		t.Fatalf("stats %+v", st)
	}
	if err := s.Apply(watch.Added, &v1.Pod{}); err == nil {
		t.Fatal("a Pod was accepted")
	}
}

func TestPruneKeepsListedAndNewerObjects(t *testing.T) {
	s := New(Limits{})
	mustApply(t, s, watch.Added, svc("a", "listed", "10", nil))
	mustApply(t, s, watch.Added, svc("a", "gone", "11", nil))
	mustApply(t, s, watch.Added, svc("a", "newer", "30", nil)) // created after the list
	gone := s.Prune(KindService, map[Key]bool{{"a", "listed"}: true}, "20")
	if len(gone) != 1 || gone[0] != (Key{"a", "gone"}) {
		t.Fatalf("pruned %v", gone)
	}
	if got := s.Keys(KindService); len(got) != 2 {
		t.Fatalf("left %v", got)
	}
}

// The cloud's list fills in what its stream of changes lost (cloudcore's
// dynamicController sends some objects of a new subscription without
// their kind, which metamanager cannot take), and a watcher sees them
// arrive; it takes nothing older than what the store holds, and nothing
// deleted after the list was made.
func TestMergeTakesWhatTheStreamLostButNothingOlderOrDeleted(t *testing.T) {
	s := New(Limits{})
	mustApply(t, s, watch.Added, svc("default", "web", "1", nil))
	mustApply(t, s, watch.Added, slice("default", "web-a", "web", "12", "10.244.1.6"))            // updated after the list
	mustApply(t, s, watch.Added, slice("default", "deleted-after-list", "db", "9", "10.244.1.9")) // then deleted
	mustApply(t, s, watch.Deleted, slice("default", "deleted-after-list", "db", "9"))
	w, err := s.ListerWatcher(KindEndpointSlice, nil, nil).Watch(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	taken, errs := s.Merge(KindEndpointSlice, []runtime.Object{
		slice("default", "web-a", "web", "10", "10.244.1.5"),
		slice("default", "web-b", "web", "11", "10.244.2.5"), // lost on the way
		slice("default", "deleted-after-list", "db", "9", "10.244.1.9"),
		svc("default", "not-a-slice", "3", nil),
	})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "list of EndpointSlices holds a *v1.Service") {
		t.Errorf("errors %v", errs)
	}
	if len(taken) != 1 || name(taken[0]) != "default/web-b" {
		t.Fatalf("taken %v", taken)
	}
	if got := s.EndpointSlices("default", "web"); len(got) != 2 || got[0].ResourceVersion != "12" || got[1].Name != "web-b" {
		t.Fatalf("slices of default/web: %v", got)
	}
	if got := s.EndpointSlices("default", "db"); len(got) != 0 {
		t.Fatalf("a slice deleted after the list came back: %v", got)
	}
	select {
	case e := <-w.ResultChan():
		if e.Type != watch.Added || name(e.Object) != "default/web-b" {
			t.Fatalf("watcher saw %s %s", e.Type, name(e.Object))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher did not see the merged slice")
	}

	// The same list again changes nothing; a newer version is taken.
	if taken, _ := s.Merge(KindEndpointSlice, []runtime.Object{slice("default", "web-b", "web", "11")}); len(taken) != 0 {
		t.Fatalf("taken again %v", taken)
	}
	if taken, _ := s.Merge(KindService, []runtime.Object{svc("default", "web", "20", nil)}); len(taken) != 1 {
		t.Fatalf("newer Service not taken: %v", taken)
	}
}

func TestDecodeTrimsAndRefusesOtherKinds(t *testing.T) {
	obj, err := Decode([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default",
		"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{...}"},"managedFields":[{"manager":"kubectl"}]},
		"spec":{"clusterIP":"10.96.3.4","ports":[{"port":80}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*v1.Service)
	if s.Spec.ClusterIP != "10.96.3.4" || s.Annotations != nil || s.ManagedFields != nil {
		t.Fatalf("decoded %+v", s)
	}
	if _, err := Decode([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`)); err == nil {
		t.Fatal("a Pod decoded")
	}
	if _, err := Decode([]byte(`{"apiVersion":"discovery.k8s.io/v1beta1","kind":"EndpointSlice"}`)); err == nil {
		t.Fatal("a v1beta1 EndpointSlice decoded")
	}
	if _, err := Decode([]byte(`not json`)); err == nil {
		t.Fatal("garbage decoded")
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata":    map[string]any{"name": "web-x", "namespace": "default", "labels": map[string]any{discoveryv1.LabelServiceName: "web"}},
		"addressType": "IPv4", "endpoints": []any{map[string]any{"addresses": []any{"10.244.1.9"}}}}}
	obj, err = FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	if e := obj.(*discoveryv1.EndpointSlice); e.Endpoints[0].Addresses[0] != "10.244.1.9" {
		t.Fatalf("decoded %+v", e)
	}
}

// recorder is an informer's handler that keeps what it saw.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func name(obj any) string {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	switch o := obj.(type) {
	case *v1.Service:
		return o.Namespace + "/" + o.Name
	case *discoveryv1.EndpointSlice:
		return o.Namespace + "/" + o.Name
	}
	return fmt.Sprintf("%T", obj)
}

// waitFor waits until r saw want: each object's events in order (an
// informer keeps the order of one object's changes, not across objects).
func waitFor(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	perObject := func(events []string) string {
		m := map[string][]string{}
		for _, e := range events {
			_, obj, _ := strings.Cut(e, " ")
			m[obj] = append(m[obj], e)
		}
		return fmt.Sprint(m)
	}
	for {
		got := r.seen()
		if perObject(got) == perObject(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("informer saw %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An informer over the store sees what was there, then every change, and
// only what its label selector matches, as kube-proxy's informers do.
func TestInformerOverTheStore(t *testing.T) {
	s := New(Limits{})
	mustApply(t, s, watch.Added, svc("default", "web", "1", nil))
	mustApply(t, s, watch.Added, svc("default", "other-proxy", "2", map[string]string{"service.kubernetes.io/service-proxy-name": "x"}))
	noProxyName, _ := labels.NewRequirement("service.kubernetes.io/service-proxy-name", selection.DoesNotExist, nil)
	inf := cache.NewSharedIndexInformer(s.ListerWatcher(KindService, labels.NewSelector().Add(*noProxyName), nil), &v1.Service{}, 0, cache.Indexers{})
	r := &recorder{}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.add("add " + name(o)) },
		UpdateFunc: func(_, o any) { r.add("update " + name(o)) },
		DeleteFunc: func(o any) { r.add("delete " + name(o)) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	waitFor(t, r, "add default/web")
	mustApply(t, s, watch.Modified, svc("default", "web", "3", nil))
	mustApply(t, s, watch.Added, svc("kube-system", "kube-dns", "4", nil))
	// A label that takes the Service out of the proxier's view is a
	// deletion for the informer; the reverse an addition.
	mustApply(t, s, watch.Modified, svc("default", "web", "5", map[string]string{"service.kubernetes.io/service-proxy-name": "x"}))
	mustApply(t, s, watch.Modified, svc("default", "other-proxy", "6", nil))
	mustApply(t, s, watch.Deleted, svc("kube-system", "kube-dns", "7", nil))
	waitFor(t, r, "add default/web", "update default/web", "add kube-system/kube-dns", "delete default/web", "add default/other-proxy", "delete kube-system/kube-dns")
	if got := len(inf.GetStore().List()); got != 1 {
		t.Fatalf("informer holds %d Services, want 1", got)
	}
}

func TestWatchResumesFromHistoryOrSaysExpired(t *testing.T) {
	s := New(Limits{History: 8})
	lw := s.ListerWatcher(KindEndpointSlice, nil, nil)
	mustApply(t, s, watch.Added, slice("a", "x", "web", "1"))
	list, err := lw.List(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.(*discoveryv1.EndpointSliceList).ResourceVersion
	mustApply(t, s, watch.Modified, slice("a", "x", "web", "2", "10.0.0.1"))
	w, err := lw.Watch(metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	e := <-w.ResultChan()
	if e.Type != watch.Modified || len(e.Object.(*discoveryv1.EndpointSlice).Endpoints) != 1 {
		t.Fatalf("replayed %v", e)
	}
	w.Stop()
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("channel open after Stop")
	}
	for i := 3; i < 30; i++ {
		mustApply(t, s, watch.Modified, slice("a", "x", "web", fmt.Sprint(i)))
	}
	_, err = lw.Watch(metav1.ListOptions{ResourceVersion: rv})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("watch from a revision the history dropped: %v", err)
	}
	if _, err := lw.Watch(metav1.ListOptions{ResourceVersion: "999"}); err == nil {
		t.Fatal("watch from a future revision accepted")
	}
}

// A watcher that does not read is ended, and the store goes on.
func TestSlowWatcherIsEndedNotWaitedFor(t *testing.T) {
	s := New(Limits{History: 4096})
	w, err := s.ListerWatcher(KindService, nil, nil).Watch(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for i := 0; i < watchBuffer+10; i++ {
			_ = s.Apply(watch.Added, svc("a", fmt.Sprint("s", i), "1", nil))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the store waited for a watcher that does not read")
	}
	n := 0
	for range w.ResultChan() {
		n++
	}
	if n != watchBuffer {
		t.Fatalf("the ended watcher delivered %d events, want its buffer of %d", n, watchBuffer)
	}
}

func TestTransformAppliesToListAndWatch(t *testing.T) {
	s := New(Limits{})
	drop := func(o runtime.Object) runtime.Object {
		if o.(*v1.Service).Name == "hidden" {
			return nil
		}
		c := o.(*v1.Service).DeepCopy()
		c.Spec.HealthCheckNodePort = 0
		return c
	}
	a := svc("a", "shown", "1", nil)
	a.Spec.HealthCheckNodePort = 32000
	mustApply(t, s, watch.Added, a)
	mustApply(t, s, watch.Added, svc("a", "hidden", "2", nil))
	list, _ := s.ListerWatcher(KindService, nil, drop).List(metav1.ListOptions{})
	items := list.(*v1.ServiceList).Items
	if len(items) != 1 || items[0].Spec.HealthCheckNodePort != 0 {
		t.Fatalf("listed %+v", items)
	}
	if a.Spec.HealthCheckNodePort != 32000 {
		t.Fatal("the transform changed the store's own object")
	}
}
