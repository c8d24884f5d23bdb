package hnsrec

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/Microsoft/hnslib/hcn"
)

// HNS is the recording HNS. Its methods are winkernel.HcnService's.
type HNS struct {
	mu            sync.Mutex
	networks      map[string]*hcn.HostComputeNetwork // by ID
	endpoints     map[string]*hcn.HostComputeEndpoint
	loadBalancers map[string]*hcn.HostComputeLoadBalancer
	next          int
	calls         []string
	// Log, when set, is told each change as it is made (the e2e build
	// writes it to the node's log).
	Log func(call string)
	// NoV2 makes it an HNS without its v2 API (a host without the
	// Containers feature).
	NoV2 bool
}

// New returns an HNS that has network (its ID is set when empty).
func New(network hcn.HostComputeNetwork) *HNS {
	h := &HNS{networks: map[string]*hcn.HostComputeNetwork{}, endpoints: map[string]*hcn.HostComputeEndpoint{},
		loadBalancers: map[string]*hcn.HostComputeLoadBalancer{}}
	if network.Id == "" {
		network.Id = h.id("net")
	}
	h.networks[network.Id] = &network
	return h
}

// L2Bridge is an l2bridge network of the pod range subnet, as cni-config
// creates it.
func L2Bridge(name, subnet, gateway string) hcn.HostComputeNetwork {
	return hcn.HostComputeNetwork{Name: name, Type: hcn.L2Bridge,
		Ipams: []hcn.Ipam{{Type: "Static", Subnets: []hcn.Subnet{{IpAddressPrefix: subnet,
			Routes: []hcn.Route{{NextHop: gateway, DestinationPrefix: "0.0.0.0/0"}}}}}}}
}

func (h *HNS) id(kind string) string {
	h.next++
	return fmt.Sprintf("%s-%d", kind, h.next)
}

// record keeps a change and hands it to Log; with h.mu held.
func (h *HNS) record(format string, a ...any) {
	c := fmt.Sprintf(format, a...)
	h.calls = append(h.calls, c)
	if h.Log != nil {
		h.Log(c)
	}
}

// Calls returns the changes made so far, in order.
func (h *HNS) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// AddLocalEndpoint adds the endpoint of a pod on this host, as the CNI
// plugin creates it, and returns its ID.
func (h *HNS) AddLocalEndpoint(network, name, ip string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.byName(network)
	e := &hcn.HostComputeEndpoint{Id: h.id("ep"), Name: name, HostComputeNetwork: n.Id,
		IpConfigurations: []hcn.IpConfig{{IpAddress: ip}}}
	h.endpoints[e.Id] = e
	return e.Id
}

func (h *HNS) byName(name string) *hcn.HostComputeNetwork {
	for _, n := range h.networks {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// LoadBalancer is a load balancer as a test reads it.
type LoadBalancer struct {
	ID string
	// Frontend is the VIP ("" for a NodePort's, which answers on every
	// host address).
	Frontend  string
	SourceVIP string
	// Protocol, External (the Service's port or node port) and Internal
	// (the target port) of its one port mapping.
	Protocol           uint32
	External, Internal uint16
	// Endpoints are the backends' addresses, sorted, "(remote)" marking
	// an endpoint on another host.
	Endpoints []string
	// SessionAffinity is set for a per-client distribution.
	SessionAffinity bool
	// NodePort says the port mapping is an external IP's (a node port).
	NodePort bool
}

func (lb LoadBalancer) String() string {
	front := lb.Frontend
	if front == "" {
		front = "node"
	}
	s := fmt.Sprintf("%s %s:%d->%d endpoints=[%s]", proto(lb.Protocol), front, lb.External, lb.Internal, strings.Join(lb.Endpoints, " "))
	if lb.SessionAffinity {
		s += " affinity=client-ip"
	}
	if lb.SourceVIP != "" {
		s += " sourceVIP=" + lb.SourceVIP
	}
	return s
}

func proto(p uint32) string {
	switch p {
	case 6:
		return "TCP"
	case 17:
		return "UDP"
	case 132:
		return "SCTP"
	}
	return fmt.Sprint(p)
}

// LoadBalancers returns the load balancers HNS holds, sorted.
func (h *HNS) LoadBalancers() []LoadBalancer {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []LoadBalancer
	for _, lb := range h.loadBalancers {
		out = append(out, h.describe(lb))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (h *HNS) describe(lb *hcn.HostComputeLoadBalancer) LoadBalancer {
	d := LoadBalancer{ID: lb.Id, SourceVIP: lb.SourceVIP}
	if len(lb.FrontendVIPs) > 0 {
		d.Frontend = lb.FrontendVIPs[0]
	}
	if len(lb.PortMappings) > 0 {
		m := lb.PortMappings[0]
		d.Protocol, d.External, d.Internal = m.Protocol, m.ExternalPort, m.InternalPort
		d.SessionAffinity = m.DistributionType == hcn.LoadBalancerDistributionSourceIP
		d.NodePort = m.Flags&16 != 0 // winkernel's LoadBalancerPortMappingFlagsVipExternalIP
	}
	for _, id := range lb.HostComputeEndpoints {
		e, ok := h.endpoints[id]
		if !ok {
			d.Endpoints = append(d.Endpoints, "missing:"+id)
			continue
		}
		ip := e.IpConfigurations[0].IpAddress
		if e.Flags&hcn.EndpointFlagsRemoteEndpoint != 0 {
			ip += "(remote)"
		}
		d.Endpoints = append(d.Endpoints, ip)
	}
	sort.Strings(d.Endpoints)
	return d
}

// RemoteEndpoints returns the addresses of the remote endpoints HNS
// holds, sorted.
func (h *HNS) RemoteEndpoints() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.endpoints {
		if e.Flags&hcn.EndpointFlagsRemoteEndpoint != 0 {
			out = append(out, e.IpConfigurations[0].IpAddress)
		}
	}
	sort.Strings(out)
	return out
}

func copyNetwork(n *hcn.HostComputeNetwork) *hcn.HostComputeNetwork { c := *n; return &c }
func copyEndpoint(e *hcn.HostComputeEndpoint) *hcn.HostComputeEndpoint {
	c := *e
	c.IpConfigurations = append([]hcn.IpConfig(nil), e.IpConfigurations...)
	return &c
}
func copyLB(lb *hcn.HostComputeLoadBalancer) *hcn.HostComputeLoadBalancer {
	c := *lb
	c.HostComputeEndpoints = append([]string(nil), lb.HostComputeEndpoints...)
	c.FrontendVIPs = append([]string(nil), lb.FrontendVIPs...)
	c.PortMappings = append([]hcn.LoadBalancerPortMapping(nil), lb.PortMappings...)
	return &c
}

// GetNetworkByName is winkernel.HcnService's.
func (h *HNS) GetNetworkByName(name string) (*hcn.HostComputeNetwork, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := h.byName(name); n != nil {
		return copyNetwork(n), nil
	}
	return nil, hcn.NetworkNotFoundError{NetworkName: name}
}

func (h *HNS) GetNetworkByID(id string) (*hcn.HostComputeNetwork, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n, ok := h.networks[id]; ok {
		return copyNetwork(n), nil
	}
	return nil, hcn.NetworkNotFoundError{NetworkID: id}
}

func (h *HNS) ListEndpoints() ([]hcn.HostComputeEndpoint, error) {
	return h.listEndpoints("")
}

func (h *HNS) ListEndpointsOfNetwork(networkID string) ([]hcn.HostComputeEndpoint, error) {
	return h.listEndpoints(networkID)
}

func (h *HNS) listEndpoints(networkID string) ([]hcn.HostComputeEndpoint, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hcn.HostComputeEndpoint
	for _, e := range h.endpoints {
		if networkID == "" || strings.EqualFold(e.HostComputeNetwork, networkID) {
			out = append(out, *copyEndpoint(e))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (h *HNS) GetEndpointByID(id string) (*hcn.HostComputeEndpoint, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.endpoints[id]; ok {
		return copyEndpoint(e), nil
	}
	return nil, hcn.EndpointNotFoundError{EndpointID: id}
}

func (h *HNS) GetEndpointByName(name string) (*hcn.HostComputeEndpoint, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.endpoints {
		if e.Name == name {
			return copyEndpoint(e), nil
		}
	}
	return nil, hcn.EndpointNotFoundError{EndpointName: name}
}

func (h *HNS) CreateEndpoint(network *hcn.HostComputeNetwork, e *hcn.HostComputeEndpoint) (*hcn.HostComputeEndpoint, error) {
	return h.createEndpoint(network, e, "CreateEndpoint")
}

func (h *HNS) CreateRemoteEndpoint(network *hcn.HostComputeNetwork, e *hcn.HostComputeEndpoint) (*hcn.HostComputeEndpoint, error) {
	return h.createEndpoint(network, e, "CreateRemoteEndpoint")
}

func (h *HNS) createEndpoint(network *hcn.HostComputeNetwork, e *hcn.HostComputeEndpoint, call string) (*hcn.HostComputeEndpoint, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.networks[network.Id]; !ok {
		return nil, hcn.NetworkNotFoundError{NetworkID: network.Id}
	}
	if len(e.IpConfigurations) == 0 {
		return nil, fmt.Errorf("%s: an endpoint without an address", call)
	}
	c := copyEndpoint(e)
	c.Id, c.HostComputeNetwork = h.id("ep"), network.Id
	h.endpoints[c.Id] = c
	h.record("%s %s ip=%s network=%s", call, c.Id, c.IpConfigurations[0].IpAddress, network.Name)
	return copyEndpoint(c), nil
}

func (h *HNS) DeleteEndpoint(e *hcn.HostComputeEndpoint) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, ok := h.endpoints[e.Id]
	if !ok {
		return hcn.EndpointNotFoundError{EndpointID: e.Id}
	}
	delete(h.endpoints, e.Id)
	h.record("DeleteEndpoint %s ip=%s", e.Id, old.IpConfigurations[0].IpAddress)
	return nil
}

func (h *HNS) ListLoadBalancers() ([]hcn.HostComputeLoadBalancer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hcn.HostComputeLoadBalancer
	for _, lb := range h.loadBalancers {
		out = append(out, *copyLB(lb))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out, nil
}

func (h *HNS) GetLoadBalancerByID(id string) (*hcn.HostComputeLoadBalancer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if lb, ok := h.loadBalancers[id]; ok {
		return copyLB(lb), nil
	}
	return nil, hcn.LoadBalancerNotFoundError{LoadBalancerId: id}
}

// checkEndpoints refuses a load balancer over an endpoint HNS does not
// hold, as HNS does.
func (h *HNS) checkEndpoints(lb *hcn.HostComputeLoadBalancer) error {
	if len(lb.PortMappings) != 1 {
		return fmt.Errorf("a load balancer with %d port mappings", len(lb.PortMappings))
	}
	for _, id := range lb.HostComputeEndpoints {
		if _, ok := h.endpoints[id]; !ok {
			return hcn.EndpointNotFoundError{EndpointID: id}
		}
	}
	return nil
}

func (h *HNS) CreateLoadBalancer(lb *hcn.HostComputeLoadBalancer) (*hcn.HostComputeLoadBalancer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkEndpoints(lb); err != nil {
		return nil, err
	}
	c := copyLB(lb)
	c.Id = h.id("lb")
	h.loadBalancers[c.Id] = c
	h.record("CreateLoadBalancer %s %s", c.Id, h.describe(c))
	return copyLB(c), nil
}

func (h *HNS) UpdateLoadBalancer(lb *hcn.HostComputeLoadBalancer, id string) (*hcn.HostComputeLoadBalancer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.loadBalancers[id]; !ok {
		return nil, hcn.LoadBalancerNotFoundError{LoadBalancerId: id}
	}
	if err := h.checkEndpoints(lb); err != nil {
		return nil, err
	}
	c := copyLB(lb)
	c.Id = id
	h.loadBalancers[id] = c
	h.record("UpdateLoadBalancer %s %s", id, h.describe(c))
	return copyLB(c), nil
}

func (h *HNS) DeleteLoadBalancer(lb *hcn.HostComputeLoadBalancer) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, ok := h.loadBalancers[lb.Id]
	if !ok {
		return hcn.LoadBalancerNotFoundError{LoadBalancerId: lb.Id}
	}
	delete(h.loadBalancers, lb.Id)
	h.record("DeleteLoadBalancer %s %s", lb.Id, h.describe(old))
	return nil
}

// GetSupportedFeatures is a current Windows Server's HNS: API v2, session
// affinity, load balancers updated in place, DSR.
func (h *HNS) GetSupportedFeatures() hcn.SupportedFeatures {
	if h.NoV2 {
		return hcn.SupportedFeatures{}
	}
	return hcn.SupportedFeatures{Api: hcn.ApiSupport{V1: true, V2: true}, DSR: true, SessionAffinity: true,
		ModifyLoadbalancer: true, RemoteSubnet: true, IPv6DualStack: true}
}

func (h *HNS) Ipv6DualStackSupported() error { return nil }
func (h *HNS) DsrSupported() error           { return nil }

// DeleteAllHnsLoadBalancerPolicy is what the proxier does as it starts:
// every load balancer of the host goes.
func (h *HNS) DeleteAllHnsLoadBalancerPolicy() {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(h.loadBalancers))
	for id := range h.loadBalancers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		h.record("DeleteLoadBalancer %s %s", id, h.describe(h.loadBalancers[id]))
		delete(h.loadBalancers, id)
	}
}
