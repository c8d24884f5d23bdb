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
	apply(t, store, watch.Added, service("web", "10.96.7.7", v1.ServiceTypeNodePort, 30080, v1.ServiceAffinityClientIP, nil))
	apply(t, store, watch.Added, slice("web-1", "web", "1",
		ep("10.244.7.10", "line3-pc"), ep("10.244.8.20", "line4-pc"), ep("127.0.0.1", "")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := startProxier(ctx, plan, store); err != nil {
		t.Fatal(err)
	}

	// ClusterIP and NodePort load balancers over the node's pod and the
	// peer's (a remote endpoint), with client-IP affinity; the cloud's
	// loopback endpoint is not one of them.
	waitLBs(t, h,
		"TCP 10.96.7.7:80->8080 endpoints=[10.244.7.10 10.244.8.20(remote)] affinity=client-ip sourceVIP=10.244.7.2",
		"TCP node:30080->8080 endpoints=[10.244.7.10 10.244.8.20(remote)] affinity=client-ip sourceVIP=10.244.7.2")
	if got := strings.Join(h.RemoteEndpoints(), ","); got != "10.244.8.20" {
		t.Fatalf("remote endpoints %s", got)
	}
	if calls := strings.Join(h.Calls(), "\n"); !strings.Contains(calls, "DeleteLoadBalancer lb-") || !strings.Contains(calls, "10.96.99.99") {
		t.Errorf("the earlier run's load balancer was not removed:\n%s", calls)
	}

	// The peer's pod goes: the load balancers are updated, its remote
	// endpoint removed.
	apply(t, store, watch.Modified, slice("web-1", "web", "2", ep("10.244.7.10", "line3-pc")))
	waitLBs(t, h,
		"TCP 10.96.7.7:80->8080 endpoints=[10.244.7.10] affinity=client-ip sourceVIP=10.244.7.2",
		"TCP node:30080->8080 endpoints=[10.244.7.10] affinity=client-ip sourceVIP=10.244.7.2")
	wait(t, "the peer's remote endpoint removed", func() bool { return len(h.RemoteEndpoints()) == 0 })

	// internalTrafficPolicy Local: the ClusterIP balances over this
	// node's pods only. A headless Service and one of another proxy get
	// no load balancer.
	local := service("local", "10.96.7.8", v1.ServiceTypeClusterIP, 0, v1.ServiceAffinityNone, nil)
	local.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
	apply(t, store, watch.Added, local)
	apply(t, store, watch.Added, slice("local-1", "local", "3", ep("10.244.7.10", "line3-pc"), ep("10.244.8.21", "line4-pc")))
	headless := service("db", v1.ClusterIPNone, v1.ServiceTypeClusterIP, 0, v1.ServiceAffinityNone, nil)
	apply(t, store, watch.Added, headless)
	hs := slice("db-1", "db", "4", ep("10.244.7.10", "line3-pc"))
	hs.Labels[v1.IsHeadlessService] = ""
	apply(t, store, watch.Added, hs)
	apply(t, store, watch.Added, service("other", "10.96.7.9", v1.ServiceTypeClusterIP, 0, v1.ServiceAffinityNone,
		map[string]string{"service.kubernetes.io/service-proxy-name": "someone-else"}))
	apply(t, store, watch.Added, slice("other-1", "other", "5", ep("10.244.7.10", "line3-pc")))
	waitLBs(t, h,
		"TCP 10.96.7.7:80->8080 endpoints=[10.244.7.10] affinity=client-ip sourceVIP=10.244.7.2",
		"TCP 10.96.7.8:80->8080 endpoints=[10.244.7.10] sourceVIP=10.244.7.2",
		"TCP node:30080->8080 endpoints=[10.244.7.10] affinity=client-ip sourceVIP=10.244.7.2")

	// The Services go: so do their load balancers.
	apply(t, store, watch.Deleted, service("web", "10.96.7.7", v1.ServiceTypeNodePort, 30080, v1.ServiceAffinityClientIP, nil))
	apply(t, store, watch.Deleted, slice("web-1", "web", "6"))
	apply(t, store, watch.Deleted, local)
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

func apply(t *testing.T, s *servicestore.Store, typ watch.EventType, obj runtime.Object) {
	t.Helper()
	if err := s.Apply(typ, obj); err != nil {
		t.Fatal(err)
	}
}

var rv = 100

func service(name, clusterIP string, typ v1.ServiceType, nodePort int32, affinity v1.ServiceAffinity, labels map[string]string) *v1.Service {
	rv++
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: fmt.Sprint(rv), Labels: labels},
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

func ep(ip, node string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true)}}
	if node != "" {
		e.NodeName = ptr.To(node)
	}
	return e
}

func slice(name, svc, version string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	rv++
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: fmt.Sprint(rv), Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
		Endpoints:   eps,
	}
}

func wait(t *testing.T, what string, ok func() bool) {
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
