package modules

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/beehive/pkg/core"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/beehive/pkg/core/model"
	connect "github.com/kubeedge/kubeedge/edge/pkg/common/cloudconnection"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao/dbclient"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/metaserver/kubernetes/storage/sqlite/imitator"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/metaserver/kubernetes/storage/sqlite/imitator/watchhook"
	"github.com/kubeedge/kubeedge/pkg/metaserver"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/clusterdns"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/servicestore"
)

// servicesModuleName is Services at the node on the bus.
const servicesModuleName = "edgeservices"

// The store's kinds as metamanager keys them (imitator's keys of every
// object of a resource, across namespaces), and as its meta table types
// them.
var storeKinds = []struct {
	kind servicestore.Kind
	key  string
	// metaType is the type of metamanager's meta table rows.
	metaType string
	gvk      schema.GroupVersionKind
}{
	{servicestore.KindService, "/core/v1/services/null/null", "service", v1.SchemeGroupVersion.WithKind("Service")},
	{servicestore.KindEndpointSlice, "/discovery.k8s.io/v1/endpointslices/null/null", "endpointslice", discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")},
}

// servicesPlan is what the node serves Services with, decided from the
// configuration and the pod network's record before the modules start.
type servicesPlan struct {
	services config.Services
	// network is the pod network's record (cni-config's or join's).
	network podnet.State
	// hostIP is the host's address on the pod network: where the DNS
	// responder listens, and the proxier's source VIP.
	hostIP netip.Addr
	// podRange is the pod network's range: the DNS responder's clients.
	podRange netip.Prefix
	goos     string
}

// planServices decides, from c and the pod network's record st (found
// says there is one), what Services at the node run with; an error says
// why they cannot run, with the fix.
func planServices(c *v1alpha2.EdgeCoreConfig, goos string, st podnet.State, found bool, recordPath string) (servicesPlan, error) {
	p := servicesPlan{services: config.ServicesOf(c), network: st, goos: goos}
	if !found || st.NetworkName() == "" {
		return p, fmt.Errorf("Services at the node are on (featureGates.%s), but no pod network is recorded in %s: "+
			"they are served on the pod network edgecore knows; fix: write it with `edgecore.exe cni-config` (or join with --mode), "+
			"or turn them off with featureGates.%s: false", config.GateServices, recordPath, config.GateServices)
	}
	var ok bool
	if p.hostIP, ok = st.HostAddress(); !ok {
		return p, fmt.Errorf("Services at the node are on, but %s does not say the host's address on the %s network "+
			"(a record of an earlier release): fix: run `edgecore.exe cni-config` again with the same flags", recordPath, st.Mode)
	}
	p.podRange, _ = st.PodRange()
	return p, nil
}

// dnsAddress is where the responder listens: the host's address on the
// pod network, port 53.
func (p servicesPlan) dnsAddress() netip.AddrPort { return netip.AddrPortFrom(p.hostIP, 53) }

// dnsClients says who the responder answers: the node's pods, and the
// host itself (its own address and loopback), never other hosts.
func (p servicesPlan) dnsClients(a netip.Addr) bool {
	return a.IsLoopback() || a == p.hostIP || p.podRange.IsValid() && p.podRange.Contains(a)
}

// RegisterServices prepares Services at the node when c turns them on
// (config.GateServices): the node's store of Services and EndpointSlices,
// fed in process from metamanager, which the Windows kernelspace proxier
// and the DNS responder answer from. It runs before the modules are
// registered: the kubelet is given the responder as the pods' DNS server
// when the configuration names none, and the store's hooks are in place
// before metamanager handles its first message.
func RegisterServices(c *v1alpha2.EdgeCoreConfig, d *deps.Dependencies) {
	s := config.ServicesOf(c)
	if !s.On {
		return
	}
	path := podnet.StateFile(d.Layout)
	st, found, err := podnet.ReadState(hostfs.OS{}, path)
	if err != nil {
		klog.ErrorS(err, "Services at the node do not run: the pod network's record cannot be read", "record", path)
		return
	}
	plan, err := planServices(c, d.Host.GOOS, st, found, path)
	if err != nil {
		klog.ErrorS(err, "Services at the node do not run")
		return
	}
	if k := c.Modules.Edged.TailoredKubeletConfig; len(k.ClusterDNS) == 0 {
		k.ClusterDNS = []string{plan.hostIP.String()}
		klog.InfoS("The kubelet gives pods the node's DNS responder as their DNS server", "clusterDNS", k.ClusterDNS)
	} else if !containsAddr(k.ClusterDNS, plan.hostIP) {
		klog.InfoS("Pods resolve through the configuration's clusterDNS, not the node's DNS responder: they lose the cluster's names while the cloud is away",
			"clusterDNS", k.ClusterDNS, "responder", plan.dnsAddress().String())
	}
	store := servicestore.New(servicestore.DefaultLimits)
	for _, k := range storeKinds {
		if _, err := watchhook.NewWatchHook(k.key, 0, storeReceiver{store}); err != nil {
			klog.ErrorS(err, "Services at the node do not run: cannot follow metamanager's changes", "kind", k.kind)
			return
		}
	}
	core.Register(&servicesModule{plan: plan, store: store})
}

func containsAddr(list []string, a netip.Addr) bool {
	for _, s := range list {
		if b, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && b == a {
			return true
		}
	}
	return false
}

// storeReceiver applies metamanager's changes of Services and
// EndpointSlices to the store, in metamanager's own goroutine: it never
// waits.
type storeReceiver struct{ store *servicestore.Store }

func (r storeReceiver) Receive(e watch.Event) error {
	u, ok := e.Object.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("metamanager handed a %T", e.Object)
	}
	obj, err := servicestore.FromUnstructured(u)
	if err != nil {
		klog.ErrorS(err, "A Service or EndpointSlice from the cloud is not kept")
		return nil
	}
	if err := r.store.Apply(e.Type, obj); err != nil {
		klog.ErrorS(err, "A Service or EndpointSlice from the cloud is not kept")
	}
	return nil
}

// servicesModule runs Services at the node on the bus.
type servicesModule struct {
	plan  servicesPlan
	store *servicestore.Store
}

func (*servicesModule) Name() string                             { return servicesModuleName }
func (*servicesModule) Group() string                            { return servicesModuleName }
func (*servicesModule) Enable() bool                             { return true }
func (*servicesModule) RestartPolicy() *core.ModuleRestartPolicy { return nil }

// Start loads the store from the node's database (what the node knew
// before it started: enough to answer while the cloud is away), then
// runs the cloud subscription, the DNS responder and the proxier until
// the node stops.
func (m *servicesModule) Start() {
	ctx := beehiveContext.GetContext()
	loadStore(m.store)
	st := m.store.Stats()
	klog.InfoS("Services at the node: the store holds what the node's database knew", "services", st.Services, "endpointSlices", st.EndpointSlices)
	sub := &subscriber{node: m.plan.services.NodeName, store: m.store, send: sendToCloud, connected: connect.IsConnected,
		forget: forgetStored, keep: keepStored}
	go sub.run(ctx)
	// In the background: the responder may wait for its address
	// (clusterdns.ListenRetry), which the proxier does not need.
	go func() {
		if err := m.serveDNS(ctx); err != nil {
			klog.ErrorS(err, "The node's DNS responder does not run")
		}
	}()
	if err := startProxier(ctx, m.plan, m.store); err != nil {
		klog.ErrorS(err, "The Windows kernelspace proxier does not run: ClusterIP and NodePort Services are not served to the node's pods")
	}
	<-ctx.Done()
}

// loadStore fills the store from metamanager's table of objects (meta_v2).
func loadStore(store *servicestore.Store) {
	svc := dbclient.NewMetaV2Service()
	for _, k := range storeKinds {
		gvr, _, _ := metaserver.ParseKey(k.key)
		rows, err := svc.RawMetaByGVRNN(gvr, "", "")
		if err != nil {
			klog.ErrorS(err, "Reading the node's stored objects failed", "kind", k.kind)
			continue
		}
		for _, r := range *rows {
			obj, err := servicestore.Decode([]byte(r.Value))
			if err == nil {
				err = store.Apply(watch.Added, obj)
			}
			if err != nil {
				klog.ErrorS(err, "A stored object is not kept", "key", r.Key)
			}
		}
	}
}

// forgetStored removes an object the cloud no longer has from
// metamanager's tables (meta_v2 and meta), so that a restart does not
// bring it back.
func forgetStored(kind servicestore.Kind, k servicestore.Key) {
	for _, sk := range storeKinds {
		if sk.kind != kind {
			continue
		}
		gvr, _, _ := metaserver.ParseKey(sk.key)
		group := gvr.Group
		if group == "" {
			group = "core"
		}
		v2 := fmt.Sprintf("/%s/%s/%s/%s/%s", group, gvr.Version, gvr.Resource, k.Namespace, k.Name)
		if err := dbclient.NewMetaV2Service().DeleteByKey(v2); err != nil {
			klog.ErrorS(err, "Removing an object the cloud no longer has failed", "key", v2)
		}
		if err := dbclient.NewMetaService().DeleteMetaByKey(k.Namespace + "/" + sk.metaType + "/" + k.Name); err != nil {
			klog.ErrorS(err, "Removing an object the cloud no longer has failed", "key", k.String())
		}
	}
}

// keepStored stores an object in metamanager's table of objects
// (meta_v2), as metamanager stores what the cloud sends.
func keepStored(u *unstructured.Unstructured) {
	if err := imitator.DefaultV2Client.InsertOrUpdateObj(context.Background(), u); err != nil {
		klog.ErrorS(err, "Storing an object of the cloud's list failed: the node answers it until it restarts", "kind", u.GetKind(),
			"object", u.GetNamespace()+"/"+u.GetName())
	}
}

// listedObject is an object of the cloud's list, as it came and typed.
type listedObject struct {
	u   *unstructured.Unstructured
	obj runtime.Object
}

// decodeList reads the cloud's list of kind: its resource version, the
// keys it names and its objects, each given gvk when it came without one.
// An object that cannot be read is reported and left out of the objects,
// not of the keys: it stays in the store if it is there.
func decodeList(body []byte, gvk schema.GroupVersionKind) (rv string, keys map[servicestore.Key]bool, items []listedObject, errs []error, err error) {
	var list struct {
		Metadata metav1.ListMeta  `json:"metadata"`
		Items    []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return "", nil, nil, nil, err
	}
	keys = map[servicestore.Key]bool{}
	for _, it := range list.Items {
		u := &unstructured.Unstructured{Object: it}
		keys[servicestore.Key{Namespace: u.GetNamespace(), Name: u.GetName()}] = true
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetGroupVersionKind(gvk)
		}
		obj, err := servicestore.FromUnstructured(u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items = append(items, listedObject{u: u, obj: obj})
	}
	return list.Metadata.ResourceVersion, keys, items, errs, nil
}

// serveDNS starts the responder on the pod network's host address.
func (m *servicesModule) serveDNS(ctx context.Context) error {
	p := m.plan
	servers, err := hostResolvers(p.goos)
	if err != nil {
		klog.ErrorS(err, "The node's DNS responder forwards no other name: the host's DNS servers are unknown")
	}
	fwd := clusterdns.NewForward(servers, []netip.Addr{p.hostIP}, clusterdns.DefaultCacheEntries)
	srv := &clusterdns.Server{Addr: p.dnsAddress(), Allow: p.dnsClients,
		Responder: clusterdns.NewResponder(p.services.ClusterDomain, m.store, fwd)}
	type listeners struct {
		pc net.PacketConn
		l  net.Listener
	}
	ls, err := clusterdns.ListenRetry(ctx, func() (listeners, error) {
		pc, l, err := srv.Listen()
		return listeners{pc, l}, err
	}, func(err error) {
		klog.InfoS("The DNS responder's address is held, most likely by the node process this one replaces; trying again", "address", srv.Addr.String(), "for", clusterdns.ListenRetryFor, "err", err)
	}, clusterdns.SleepOrDone)
	pc, l := ls.pc, ls.l
	if err != nil {
		return fmt.Errorf("%w; the pods' DNS server is that address (the pod network's host address): check that the pod network is up (`edgecore.exe preflight`)", err)
	}
	klog.InfoS("The node's DNS responder answers the pods", "address", srv.Addr.String(), "zone", p.services.ClusterDomain,
		"clients", p.podRange.String(), "forwardsTo", fmt.Sprint(fwd.Servers()))
	go func() {
		if err := srv.Serve(ctx, pc, l); err != nil {
			klog.ErrorS(err, "The node's DNS responder stopped")
		}
	}()
	return nil
}

// hostResolvers are the host's DNS servers, which other names are
// forwarded to: the adapters' on Windows, resolv.conf's elsewhere.
func hostResolvers(goos string) ([]netip.AddrPort, error) {
	var list []string
	var err error
	if goos == config.Windows {
		list, err = cni.HostResolvers()
	} else {
		var data []byte
		data, err = os.ReadFile("/etc/resolv.conf")
		list = clusterdns.ResolvConfServers(data)
	}
	var out []netip.AddrPort
	for _, s := range list {
		if a, perr := netip.ParseAddr(strings.TrimSpace(s)); perr == nil {
			out = append(out, netip.AddrPortFrom(a.Unmap(), 53))
		}
	}
	return out, err
}

// The proxier's view of the store, as kube-proxy's informers see the API
// server: no Service that names another proxy
// (service.kubernetes.io/service-proxy-name), no EndpointSlice of a
// headless Service (service.kubernetes.io/headless).
func proxySelector() labels.Selector {
	noProxyName, _ := labels.NewRequirement("service.kubernetes.io/service-proxy-name", selection.DoesNotExist, nil)
	noHeadless, _ := labels.NewRequirement(v1.IsHeadlessService, selection.DoesNotExist, nil)
	return labels.NewSelector().Add(*noProxyName, *noHeadless)
}

// proxyService is what the proxier is given of a Service: without a
// health check node port, so that the proxier's health check server never
// opens a port (no cloud load balancer probes an edge node).
func proxyService(obj runtime.Object) runtime.Object {
	s := obj.(*v1.Service)
	if s.Spec.HealthCheckNodePort == 0 {
		return s
	}
	c := s.DeepCopy()
	c.Spec.HealthCheckNodePort = 0
	return c
}

// proxyEndpointSlice is what the proxier is given of an EndpointSlice:
// without loopback addresses, which are never a pod's or a peer's
// (cloudcore rewrites the kubernetes Service's endpoint to the edge's
// metaServer at 127.0.0.1, which this node never opens to pods).
func proxyEndpointSlice(obj runtime.Object) runtime.Object {
	e := obj.(*discoveryv1.EndpointSlice)
	loopback := func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.IsLoopback()
	}
	has := false
	for _, ep := range e.Endpoints {
		for _, a := range ep.Addresses {
			has = has || loopback(a)
		}
	}
	if !has {
		return e
	}
	c := e.DeepCopy()
	c.Endpoints = c.Endpoints[:0]
	for _, ep := range e.Endpoints {
		keep := ep.DeepCopy()
		keep.Addresses = keep.Addresses[:0]
		for _, a := range ep.Addresses {
			if !loopback(a) {
				keep.Addresses = append(keep.Addresses, a)
			}
		}
		if len(keep.Addresses) > 0 {
			c.Endpoints = append(c.Endpoints, *keep)
		}
	}
	return c
}

// resubscribeAfter paces the subscription after a failure: the cloud may
// run without dynamicController for a long time.
var resubscribeAfter = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 5 * time.Minute}

// subscriber asks the cloud's dynamicController, each time the node
// connects, for every Service and EndpointSlice of the cluster (a watch:
// the cloud sends them all, then every change, through metamanager into
// the store) and for a list of them, by which the store forgets what was
// deleted while the node was away.
type subscriber struct {
	node      string
	store     *servicestore.Store
	send      func(model.Message) (model.Message, error)
	connected func() bool
	forget    func(servicestore.Kind, servicestore.Key)
	// keep stores an object the cloud's list brought in metamanager's
	// table, where a restart finds it.
	keep func(*unstructured.Unstructured)
	// poll is how often the connection is looked at (2 s when zero).
	poll time.Duration
}

func (s *subscriber) run(ctx context.Context) {
	poll := s.poll
	if poll == 0 {
		poll = 2 * time.Second
	}
	subscribed, failures := false, 0
	var retryAt time.Time
	lastErr := ""
	for {
		if !s.connected() {
			subscribed = false
		} else if !subscribed && !time.Now().Before(retryAt) {
			if err := s.subscribe(ctx); err != nil {
				if msg := err.Error(); msg != lastErr {
					klog.ErrorS(err, "The node's store of Services does not follow the cloud")
					lastErr = msg
				}
				retryAt = time.Now().Add(resubscribeAfter[min(failures, len(resubscribeAfter)-1)])
				failures++
			} else {
				subscribed, failures, lastErr = true, 0, ""
				st := s.store.Stats()
				klog.InfoS("The node's store of Services follows the cloud", "services", st.Services, "endpointSlices", st.EndpointSlices)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// subscribe sends the watch and the list of each kind.
func (s *subscriber) subscribe(ctx context.Context) error {
	for _, k := range storeKinds {
		if _, err := s.apply(ctx, k.key, metaserver.Watch); err != nil {
			return fmt.Errorf("watching %ss: %w", k.kind, err)
		}
		body, err := s.apply(ctx, k.key, metaserver.List)
		if err != nil {
			return fmt.Errorf("listing %ss: %w", k.kind, err)
		}
		listRV, listed, items, errs, err := decodeList(body, k.gvk)
		if err != nil {
			return fmt.Errorf("the cloud's list of %ss: %w", k.kind, err)
		}
		// What the stream of changes lost comes from the list: cloudcore
		// sends some objects of a new watch without their kind (those
		// its informer has not yet handed to its own event handler),
		// which metamanager drops after answering the cloud that it took
		// them (docs/networks.md).
		objs := make([]runtime.Object, len(items))
		byObj := map[runtime.Object]*unstructured.Unstructured{}
		for i, it := range items {
			objs[i] = it.obj
			byObj[it.obj] = it.u
		}
		taken, merr := s.store.Merge(k.kind, objs)
		for _, err := range append(errs, merr...) {
			klog.ErrorS(err, "An object of the cloud's list is not kept")
		}
		for _, o := range taken {
			s.keep(byObj[o])
		}
		if len(taken) > 0 {
			klog.InfoS("The cloud's list brought objects the node had not received", "kind", k.kind, "count", len(taken))
		}
		for _, gone := range s.store.Prune(k.kind, listed, listRV) {
			klog.InfoS("The cloud no longer has it: removed from the node's store", "kind", k.kind, "object", gone.String())
			s.forget(k.kind, gone)
		}
	}
	return nil
}

// apply asks the cloud's dynamicController for every object of the kind
// key names.
func (s *subscriber) apply(ctx context.Context, key string, verb metaserver.ApplicationVerb) ([]byte, error) {
	return askCloud(ctx, s.send, s.node, key, verb, metav1.ListOptions{},
		"with cloudcore's requireAuthorization, nodes need list and watch on services and endpointslices: bind the ClusterRole system:node-proxier to the group system:nodes")
}
