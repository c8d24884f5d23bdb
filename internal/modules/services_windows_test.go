package modules

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubernetes/pkg/proxy/winkernel"
	"k8s.io/utils/ptr"

	"github.com/Microsoft/hnslib/hcn"

	"github.com/kubeedge-windows/edgecore/internal/servicestore"
	"github.com/kubeedge-windows/edgecore/test/hnsrec"
)

// The proxier's wiring over a recording HNS (Wine has none): the store's
// Services and EndpointSlices become HNS load balancers and remote
// endpoints, changed and removed as they change.
func TestProxierProgramsHNSFromTheStore(t *testing.T) {
	plan := testPlan(t)
	h := hnsrec.New(hnsrec.L2Bridge("cbr0", "10.244.7.0/24", "10.244.7.1"))
	h.AddLocalEndpoint("cbr0", "cbr0-host", "10.244.7.2")
	h.AddLocalEndpoint("cbr0", "pod-a", "10.244.7.10")
	// A load balancer left by an earlier run: the proxier starts clean.
	if _, err := h.CreateLoadBalancer(&hcn.HostComputeLoadBalancer{FrontendVIPs: []string{"10.96.99.99"},
		PortMappings: []hcn.LoadBalancerPortMapping{{Protocol: 6, InternalPort: 1, ExternalPort: 1}}}); err != nil {
		t.Fatal(err)
	}
	useHNS(t, h)
	store := servicestore.New(servicestore.DefaultLimits)
	applyTo(t, store, watch.Added, svcObj("web", "10.96.7.7", v1.ServiceTypeNodePort, 30080, v1.ServiceAffinityClientIP, nil))
	applyTo(t, store, watch.Added, sliceObj("web-1", "web", "1",
		epOf("10.244.7.10", "line3-pc"), epOf("10.244.8.20", "line4-pc"), epOf("127.0.0.1", "")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := startProxier(ctx, plan, store); err != nil {
		t.Fatal(err)
	}

	// ClusterIP and NodePort load balancers over the node's pod and the
	// peer's (a remote endpoint), with client-IP affinity; the cloud's
	// loopback endpoint is not one of them.
	waitLBs(t, h,
		"TCP 10.96.7.7:80->8080 endpoints=[10.244.7.10 10.244.8.20(remote)] affinity=client-ip",
		"TCP node:30080->8080 endpoints=[10.244.7.10 10.244.8.20(remote)] affinity=client-ip")
	if got := strings.Join(h.RemoteEndpoints(), ","); got != "10.244.8.20" {
		t.Fatalf("remote endpoints %s", got)
	}
	if calls := strings.Join(h.Calls(), "\n"); !strings.Contains(calls, "DeleteLoadBalancer lb-") || !strings.Contains(calls, "10.96.99.99") {
		t.Errorf("the earlier run's load balancer was not removed:\n%s", calls)
	}

	// The peer's pod goes: the load balancers are updated, its remote
	// endpoint removed.
	applyTo(t, store, watch.Modified, sliceObj("web-1", "web", "2", epOf("10.244.7.10", "line3-pc")))
	waitLBs(t, h,
		"TCP 10.96.7.7:80->8080 endpoints=[10.244.7.10] affinity=client-ip",
		"TCP node:30080->8080 endpoints=[10.244.7.10] affinity=client-ip")
	waitUntil(t, "the peer's remote endpoint removed", func() bool { return len(h.RemoteEndpoints()) == 0 })

	// internalTrafficPolicy Local: the ClusterIP balances over this
	// node's pods only. A headless Service and one of another proxy get
	// no load balancer.
	local := svcObj("local", "10.96.7.8", v1.ServiceTypeClusterIP, 0, v1.ServiceAffinityNone, nil)
	local.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
	applyTo(t, store, watch.Added, local)
	applyTo(t, store, watch.Added, sliceObj("local-1", "local", "3", epOf("10.244.7.10", "line3-pc"), epOf("10.244.8.21", "line4-pc")))
	headless := svcObj("db", v1.ClusterIPNone, v1.ServiceTypeClusterIP, 0, v1.ServiceAffinityNone, nil)
	applyTo(t, store, watch.Added, headless)
	hs := sliceObj("db-1", "db", "4", epOf("10.244.7.10", "line3-pc"))
	hs.Labels[v1.IsHeadlessService] = ""
	applyTo(t, store, watch.Added, hs)
	applyTo(t, store, watch.Added, svcObj("other", "10.96.7.9", v1.ServiceTypeClusterIP, 0, v1.ServiceAffinityNone,
		map[string]string{"service.kubernetes.io/service-proxy-name": "someone-else"}))
	applyTo(t, store, watch.Added, sliceObj("other-1", "other", "5", epOf("10.244.7.10", "line3-pc")))
	waitLBs(t, h,
		"TCP 10.96.7.7:80->8080 endpoints=[10.244.7.10] affinity=client-ip",
		"TCP 10.96.7.8:80->8080 endpoints=[10.244.7.10]",
		"TCP node:30080->8080 endpoints=[10.244.7.10] affinity=client-ip")

	// The Services go: so do their load balancers.
	applyTo(t, store, watch.Deleted, svcObj("web", "10.96.7.7", v1.ServiceTypeNodePort, 30080, v1.ServiceAffinityClientIP, nil))
	applyTo(t, store, watch.Deleted, sliceObj("web-1", "web", "6"))
	applyTo(t, store, watch.Deleted, local)
	waitLBs(t, h)
}

func testPlan(t *testing.T) servicesPlan {
	t.Helper()
	p, err := planServices(servicesConfig(t), "windows", l2bridgeRecord(), true, `C:\Program Files\containerd\edgecore-cni-config.json`)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func useHNS(t *testing.T, h *hnsrec.HNS) {
	old, oldHook := newHcnService, winkernel.NewHcnService
	newHcnService = func(servicesPlan) winkernel.HcnService { return h }
	t.Cleanup(func() { newHcnService, winkernel.NewHcnService = old, oldHook })
}

func applyTo(t *testing.T, s *servicestore.Store, typ watch.EventType, obj runtime.Object) {
	t.Helper()
	if err := s.Apply(typ, obj); err != nil {
		t.Fatal(err)
	}
}

var storeVersion = 100

func svcObj(name, clusterIP string, typ v1.ServiceType, nodePort int32, affinity v1.ServiceAffinity, labels map[string]string) *v1.Service {
	storeVersion++
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: fmt.Sprint(storeVersion), Labels: labels},
		Spec: v1.ServiceSpec{Type: typ, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP}, SessionAffinity: affinity,
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP, NodePort: nodePort}}},
	}
	if clusterIP == v1.ClusterIPNone {
		s.Spec.ClusterIPs = nil
	}
	if affinity == v1.ServiceAffinityClientIP {
		s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
	}
	return s
}

func epOf(ip, node string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true)}}
	if node != "" {
		e.NodeName = ptr.To(node)
	}
	return e
}

func sliceObj(name, svc, version string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	storeVersion++
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: fmt.Sprint(storeVersion), Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
		Endpoints:   eps,
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

func waitLBs(t *testing.T, h *hnsrec.HNS, want ...string) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got = got[:0]
		for _, lb := range h.LoadBalancers() {
			got = append(got, lb.String())
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("HNS load balancers\n  %s\nwant\n  %s\ncalls:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), strings.Join(h.Calls(), "\n  "))
		}
	}
}

// Upstream's NewProxier panics on an HNS without its v2 API and waits
// without end for a network that is not there: the node checks both
// first, and its module's start never blocks on them.
func TestProxierNeedsHNSv2AndWaitsForTheNetworkInTheBackground(t *testing.T) {
	plan := testPlan(t)
	h := hnsrec.New(hnsrec.L2Bridge("cbr0", "10.244.7.0/24", "10.244.7.1"))
	h.NoV2 = true
	useHNS(t, h)
	store := servicestore.New(servicestore.DefaultLimits)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := startProxier(ctx, plan, store); err == nil || !strings.Contains(err.Error(), "v2 API") {
		t.Fatalf("an HNS without v2: %v", err)
	}
	other := hnsrec.New(hnsrec.L2Bridge("someone-elses", "10.244.9.0/24", "10.244.9.1"))
	useHNS(t, other)
	done := make(chan error, 1)
	go func() { done <- startProxier(ctx, plan, store) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("startProxier waited for the missing network")
	}
	if calls := other.Calls(); len(calls) != 0 {
		t.Fatalf("the proxier programmed HNS without its network: %v", calls)
	}
}
