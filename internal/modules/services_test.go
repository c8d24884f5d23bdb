package modules

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/beehive/pkg/core/model"
	"github.com/kubeedge/kubeedge/pkg/metaserver"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/servicestore"
)

func servicesConfig(t *testing.T) *v1alpha2.EdgeCoreConfig {
	t.Helper()
	c, err := config.Sample(config.KindDefault, config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "10.20.30.40"})
	if err != nil {
		t.Fatal(err)
	}
	config.SetServices(c, true, netip.MustParseAddr("10.244.7.2"))
	return c
}

func l2bridgeRecord() podnet.State {
	return podnet.State{Mode: "l2bridge", Subnet: "10.244.7.0/24", HostIP: "10.244.7.2",
		Network: &podnet.Object{Name: "cbr0", ID: "net-1", Created: true}, Endpoint: &podnet.Object{Name: "cbr0-host", ID: "ep-1", IP: "10.244.7.2", Created: true}}
}

func TestPlanServices(t *testing.T) {
	c := servicesConfig(t)
	p, err := planServices(c, "windows", l2bridgeRecord(), true, "rec.json")
	if err != nil {
		t.Fatal(err)
	}
	if p.dnsAddress().String() != "10.244.7.2:53" || p.network.NetworkName() != "cbr0" || p.services.NodeName != "line3-pc" {
		t.Fatalf("plan %+v", p)
	}
	// The responder answers the node's pods and the host, nobody else.
	for a, want := range map[string]bool{"10.244.7.33": true, "10.244.7.2": true, "127.0.0.1": true, "10.244.8.5": false, "192.168.1.9": false} {
		if got := p.dnsClients(netip.MustParseAddr(a)); got != want {
			t.Errorf("client %s answered: %v", a, got)
		}
	}
	_, err = planServices(c, "windows", podnet.State{}, false, "rec.json")
	if err == nil || !strings.Contains(err.Error(), "no pod network is recorded in rec.json") || !strings.Contains(err.Error(), "edgecore.exe cni-config") {
		t.Errorf("without a record: %v", err)
	}
	old := podnet.State{Mode: "nat", Subnet: "10.244.7.0/24"}
	if _, err := planServices(c, "windows", old, true, "rec.json"); err == nil || !strings.Contains(err.Error(), "run `edgecore.exe cni-config` again") {
		t.Errorf("a nat record of an earlier release: %v", err)
	}
	nat := podnet.State{Mode: "nat", Subnet: "172.30.0.0/20", HostIP: "172.30.0.1"}
	if p, err := planServices(c, "windows", nat, true, "rec.json"); err != nil || p.network.NetworkName() != "nat" || p.dnsAddress().String() != "172.30.0.1:53" {
		t.Errorf("nat: %+v %v", p, err)
	}
}

func TestProxierViewOfTheStore(t *testing.T) {
	s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: v1.ServiceSpec{HealthCheckNodePort: 31000}}
	if got := proxyService(s).(*v1.Service); got.Spec.HealthCheckNodePort != 0 || s.Spec.HealthCheckNodePort != 31000 {
		t.Errorf("health check node port %d (store's %d)", got.Spec.HealthCheckNodePort, s.Spec.HealthCheckNodePort)
	}
	e := &discoveryv1.EndpointSlice{Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}, {Addresses: []string{"10.244.7.9"}}}}
	got := proxyEndpointSlice(e).(*discoveryv1.EndpointSlice)
	if len(got.Endpoints) != 1 || got.Endpoints[0].Addresses[0] != "10.244.7.9" || len(e.Endpoints) != 2 {
		t.Errorf("endpoints %+v (store's %d)", got.Endpoints, len(e.Endpoints))
	}
	if same := proxyEndpointSlice(got); same != got {
		t.Error("a slice without loopback addresses was copied")
	}
	sel := proxySelector()
	if sel.Matches(labelSet{"service.kubernetes.io/service-proxy-name": "x"}) || sel.Matches(labelSet{v1.IsHeadlessService: ""}) || !sel.Matches(labelSet{"app": "web"}) {
		t.Errorf("selector %s", sel)
	}
}

type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

// cloud answers the node's applications as cloudcore's dynamicController
// does, from lists of names.
type cloud struct {
	lists  map[string]string // key -> list JSON
	mu     sync.Mutex
	asked  []string
	err    error
	reject string
}

func (c *cloud) send(m model.Message) (model.Message, error) {
	app, err := metaserver.MsgToApplication(m)
	if err != nil {
		return model.Message{}, err
	}
	asked := string(app.Verb) + " " + app.Key + " by " + app.Nodename
	var o metav1.ListOptions
	if err := app.OptionTo(&o); err == nil && o.FieldSelector != "" {
		asked += " where " + o.FieldSelector
	}
	c.mu.Lock()
	c.asked = append(c.asked, asked)
	err = c.err
	c.mu.Unlock()
	if err != nil {
		return model.Message{}, err
	}
	if app.ID == "" {
		return model.Message{}, errors.New("an application without its ID")
	}
	app.Status = metaserver.Approved
	if c.reject != "" {
		app.Status, app.Reason = metaserver.Rejected, c.reject
	}
	if app.Verb == metaserver.List {
		app.RespBody = []byte(c.lists[app.Key])
	}
	return *model.NewMessage(m.GetID()).FillBody(app), nil
}

func TestSubscriberWatchesListsAndForgetsWhatTheCloudDeleted(t *testing.T) {
	store := servicestore.New(servicestore.DefaultLimits)
	for _, s := range []*v1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept", ResourceVersion: "10"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "deleted-while-away", ResourceVersion: "11"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "created-after-the-list", ResourceVersion: "60"}},
	} {
		if err := store.Apply(watch.Added, s); err != nil {
			t.Fatal(err)
		}
	}
	c := &cloud{lists: map[string]string{
		"/core/v1/services/null/null": `{"metadata":{"resourceVersion":"50"},"items":[` +
			`{"metadata":{"namespace":"default","name":"kept","resourceVersion":"10"}},` +
			// Created before the list, never received: cloudcore sent it
			// without its kind, which metamanager drops.
			`{"apiVersion":"v1","kind":"Service","metadata":{"namespace":"default","name":"lost-on-the-way","resourceVersion":"40"},"spec":{"clusterIP":"10.96.0.40"}}]}`,
		// The API server's list items come without their kind.
		"/discovery.k8s.io/v1/endpointslices/null/null": `{"metadata":{"resourceVersion":"50"},"items":[` +
			`{"metadata":{"namespace":"default","name":"lost-on-the-way-1","resourceVersion":"41","labels":{"kubernetes.io/service-name":"lost-on-the-way"}},` +
			`"addressType":"IPv4","endpoints":[{"addresses":["10.244.9.9"]}]}]}`,
	}}
	var forgotten, kept []string
	sub := &subscriber{node: "line3-pc", store: store, send: c.send, connected: func() bool { return true },
		forget: func(k servicestore.Kind, key servicestore.Key) {
			forgotten = append(forgotten, k.String()+" "+key.String())
		},
		keep: func(u *unstructured.Unstructured) {
			kept = append(kept, u.GetAPIVersion()+" "+u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
		}}
	if err := sub.subscribe(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "watch /core/v1/services/null/null by line3-pc, list /core/v1/services/null/null by line3-pc, " +
		"watch /discovery.k8s.io/v1/endpointslices/null/null by line3-pc, list /discovery.k8s.io/v1/endpointslices/null/null by line3-pc"
	if got := strings.Join(c.asked, ", "); got != want {
		t.Errorf("asked\n%s\nwant\n%s", got, want)
	}
	if got := fmt.Sprint(store.Keys(servicestore.KindService)); got != "[default/created-after-the-list default/kept default/lost-on-the-way]" {
		t.Errorf("store holds %s", got)
	}
	if s, ok := store.Service("default", "lost-on-the-way"); !ok || s.Spec.ClusterIP != "10.96.0.40" {
		t.Errorf("the Service the stream lost: %v", s)
	}
	if got := store.EndpointSlices("default", "lost-on-the-way"); len(got) != 1 || got[0].Endpoints[0].Addresses[0] != "10.244.9.9" {
		t.Errorf("the EndpointSlice the stream lost: %v", got)
	}
	// What the list brought is stored where a restart finds it, with its
	// kind; what the node already held is not written again.
	if got := strings.Join(kept, ", "); got != "v1 Service default/lost-on-the-way, discovery.k8s.io/v1 EndpointSlice default/lost-on-the-way-1" {
		t.Errorf("kept %s", got)
	}
	if got := strings.Join(forgotten, ","); got != "Service default/deleted-while-away" {
		t.Errorf("forgotten %s", got)
	}

	// A cloud without dynamicController never answers.
	c.err = errors.New("timeout")
	err := sub.subscribe(context.Background())
	if err == nil || !errors.Is(err, errNoDynamicController) || !strings.Contains(err.Error(), "modules.dynamicController.enable: true") {
		t.Errorf("no answer: %v", err)
	}
	c.err, c.reject = nil, "forbidden"
	if err := sub.subscribe(context.Background()); err == nil || !strings.Contains(err.Error(), "system:node-proxier") {
		t.Errorf("refused: %v", err)
	}
}

func TestStoreReceiverTakesMetamanagersObjects(t *testing.T) {
	store := servicestore.New(servicestore.DefaultLimits)
	r := storeReceiver{store}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": "default", "name": "web", "resourceVersion": "7"},
		"spec":     map[string]any{"clusterIP": "10.96.3.3"}}}
	if err := r.Receive(watch.Event{Type: watch.Added, Object: u}); err != nil {
		t.Fatal(err)
	}
	if s, ok := store.Service("default", "web"); !ok || s.Spec.ClusterIP != "10.96.3.3" {
		t.Fatalf("store: %v %v", s, ok)
	}
	// What is not a Service or EndpointSlice is logged, never an error
	// that would stop metamanager's other hooks.
	if err := r.Receive(watch.Event{Type: watch.Added, Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Receive(watch.Event{Type: watch.Deleted, Object: u}); err != nil {
		t.Fatal(err)
	}
	if _, ok := store.Service("default", "web"); ok {
		t.Fatal("deleted Service still held")
	}
}
