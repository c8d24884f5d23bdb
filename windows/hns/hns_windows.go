package hns

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/Microsoft/hcsshim"
	"github.com/Microsoft/hcsshim/hcn"
)

// Client is the host's HNS.
type Client struct{}

// New returns the host's HNS client.
func New() Client { return Client{} }

// Windows tests for HNS availability before any call: on a host without
// the Containers feature the service is missing and hcn's errors say
// little.
func available() error {
	if err := hcn.V2ApiSupported(); err != nil {
		return fmt.Errorf("%w (%v): install the Containers feature (Install-WindowsFeature -Name Containers) and restart", ErrUnavailable, err)
	}
	return nil
}

// NetworkByName returns the network called name, or nil when there is
// none.
func (Client) NetworkByName(name string) (*Network, error) {
	if err := available(); err != nil {
		return nil, err
	}
	n, err := hcn.GetNetworkByName(name)
	if hcn.IsNotFoundError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up HNS network %q: %w", name, err)
	}
	return fromHCNNetwork(n), nil
}

func fromHCNNetwork(n *hcn.HostComputeNetwork) *Network {
	out := &Network{ID: n.Id, Name: n.Name, Type: string(n.Type)}
	for _, ipam := range n.Ipams {
		for _, s := range ipam.Subnets {
			sub := Subnet{}
			sub.Prefix, _ = netip.ParsePrefix(s.IpAddressPrefix)
			for _, r := range s.Routes {
				if gw, err := netip.ParseAddr(r.NextHop); err == nil {
					sub.Gateway = gw
					break
				}
			}
			out.Subnets = append(out.Subnets, sub)
		}
	}
	for _, p := range n.Policies {
		if p.Type != hcn.NetAdapterName {
			continue
		}
		var s hcn.NetAdapterNameNetworkPolicySetting
		if json.Unmarshal(p.Settings, &s) == nil {
			out.Adapter = s.NetworkAdapterName
		}
	}
	return out
}

// CreateNetwork creates an L2Bridge network bound to spec.Adapter and
// waits until the host's address is back on "vEthernet (<adapter>)".
func (Client) CreateNetwork(spec NetworkSpec) (*Network, error) {
	if err := available(); err != nil {
		return nil, err
	}
	adapter, err := json.Marshal(hcn.NetAdapterNameNetworkPolicySetting{NetworkAdapterName: spec.Adapter})
	if err != nil {
		return nil, err
	}
	n := &hcn.HostComputeNetwork{
		Name: spec.Name,
		Type: hcn.NetworkType(spec.Type),
		Ipams: []hcn.Ipam{{
			Type: "Static",
			Subnets: []hcn.Subnet{{
				IpAddressPrefix: spec.Subnet.String(),
				Routes:          []hcn.Route{{NextHop: spec.Gateway.String(), DestinationPrefix: "0.0.0.0/0"}},
			}},
		}},
		Policies:      []hcn.NetworkPolicy{{Type: hcn.NetAdapterName, Settings: adapter}},
		SchemaVersion: hcn.V2SchemaVersion(),
	}
	created, err := n.Create()
	if err != nil {
		return nil, fmt.Errorf("create HNS network %q: %w", spec.Name, err)
	}
	if spec.HostIP.IsValid() {
		// Binding the adapter to the new switch takes the host off the
		// network for a moment; its address then moves to the switch's
		// host adapter, "vEthernet (<adapter>)". Until it has, the next
		// steps would race the move.
		deadline := time.Now().Add(30 * time.Second)
		for {
			if i, err := interfaceWith(spec.HostIP); err == nil && strings.HasPrefix(strings.ToLower(i.Name), "vethernet (") {
				break
			}
			if time.Now().After(deadline) {
				return fromHCNNetwork(created), fmt.Errorf("created HNS network %q, but the host's address %s did not move to \"vEthernet (%s)\" within 30 s", spec.Name, spec.HostIP, spec.Adapter)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return fromHCNNetwork(created), nil
}

// DeleteNetwork deletes the network with that ID; one that is gone
// already is not an error.
func (Client) DeleteNetwork(id string) error {
	if err := available(); err != nil {
		return err
	}
	n, err := hcn.GetNetworkByID(id)
	if hcn.IsNotFoundError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up HNS network %s: %w", id, err)
	}
	if err := n.Delete(); err != nil && !hcn.IsNotFoundError(err) {
		return fmt.Errorf("delete HNS network %q: %w", n.Name, err)
	}
	return nil
}

// EndpointByName returns the endpoint called name, or nil when there is
// none.
func (Client) EndpointByName(name string) (*Endpoint, error) {
	if err := available(); err != nil {
		return nil, err
	}
	e, err := hcn.GetEndpointByName(name)
	if hcn.IsNotFoundError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up HNS endpoint %q: %w", name, err)
	}
	return fromHCNEndpoint(e), nil
}

func fromHCNEndpoint(e *hcn.HostComputeEndpoint) *Endpoint {
	out := &Endpoint{ID: e.Id, Name: e.Name, NetworkID: e.HostComputeNetwork}
	for _, c := range e.IpConfigurations {
		if a, err := netip.ParseAddr(c.IpAddress); err == nil && a.Is4() {
			out.IP = a
			break
		}
	}
	return out
}

// CreateEndpoint creates an endpoint with a fixed address on the network.
func (Client) CreateEndpoint(networkID string, spec EndpointSpec) (*Endpoint, error) {
	if err := available(); err != nil {
		return nil, err
	}
	n, err := hcn.GetNetworkByID(networkID)
	if err != nil {
		return nil, fmt.Errorf("look up HNS network %s: %w", networkID, err)
	}
	e := &hcn.HostComputeEndpoint{
		Name:               spec.Name,
		HostComputeNetwork: networkID,
		IpConfigurations:   []hcn.IpConfig{{IpAddress: spec.IP.String(), PrefixLength: uint8(spec.Prefix)}},
		SchemaVersion:      hcn.V2SchemaVersion(),
	}
	created, err := n.CreateEndpoint(e)
	if err != nil {
		return nil, fmt.Errorf("create HNS endpoint %q: %w", spec.Name, err)
	}
	return fromHCNEndpoint(created), nil
}

// AttachHost attaches the endpoint to the host's default compartment, so
// that it becomes the host adapter "vEthernet (<endpoint>)". hcn has no
// call for that; HNS's v1 attach is what hns.psm1's Attach-HnsHostEndpoint
// and flannel's host-gw backend use. An endpoint that is attached already
// is fine, and HNS may need a moment after creating it.
func (Client) AttachHost(endpointID string) error {
	if err := available(); err != nil {
		return err
	}
	e, err := hcsshim.GetHNSEndpointByID(endpointID)
	if err != nil {
		return fmt.Errorf("look up HNS endpoint %s: %w", endpointID, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = e.HostAttach(1)
		if err == nil || strings.Contains(err.Error(), "already attached") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("attach HNS endpoint %q to the host: %w", e.Name, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// DeleteEndpoint detaches the endpoint from the host, if it is attached,
// and deletes it; one that is gone already is not an error.
func (Client) DeleteEndpoint(id string) error {
	if err := available(); err != nil {
		return err
	}
	e, err := hcn.GetEndpointByID(id)
	if hcn.IsNotFoundError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up HNS endpoint %s: %w", id, err)
	}
	if v1, err := hcsshim.GetHNSEndpointByID(id); err == nil {
		// Not attached is the usual reason this fails; Delete reports any
		// other problem.
		_ = v1.HostDetach()
	}
	if err := e.Delete(); err != nil && !hcn.IsNotFoundError(err) {
		return fmt.Errorf("delete HNS endpoint %q: %w", e.Name, err)
	}
	return nil
}

// interfaceAppearing waits up to 10 s for an interface with addr: a host
// endpoint's adapter appears a moment after the attach returns.
func interfaceAppearing(addr netip.Addr) (net.Interface, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		i, err := interfaceWith(addr)
		if err == nil || time.Now().After(deadline) {
			return i, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// interfaceWith returns the host interface that has addr.
func interfaceWith(addr netip.Addr) (net.Interface, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return net.Interface{}, err
	}
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(ipn.IP); ok && ip.Unmap() == addr {
					return iface, nil
				}
			}
		}
	}
	return net.Interface{}, fmt.Errorf("no interface of this host has the address %s", addr)
}

// LoadBalancing reads what HNS offers load balancing.
func (Client) LoadBalancing() (LoadBalancing, error) {
	if err := available(); err != nil {
		return LoadBalancing{}, err
	}
	f := hcn.GetSupportedFeatures()
	return LoadBalancing{APIV2: f.Api.V2, SessionAffinity: f.SessionAffinity, ModifyLoadBalancer: f.ModifyLoadbalancer, DSR: f.DSR}, nil
}

// LoadBalancers lists the host's load balancers.
func (Client) LoadBalancers() ([]LoadBalancer, error) {
	if err := available(); err != nil {
		return nil, err
	}
	lbs, err := hcn.ListLoadBalancers()
	if err != nil {
		return nil, fmt.Errorf("list HNS load balancers: %w", err)
	}
	out := make([]LoadBalancer, 0, len(lbs))
	for _, lb := range lbs {
		out = append(out, LoadBalancer{ID: lb.Id, Frontends: lb.FrontendVIPs, EndpointIDs: lb.HostComputeEndpoints})
	}
	return out, nil
}

// DeleteLoadBalancer deletes a load balancer; one that is gone already is
// not an error.
func (Client) DeleteLoadBalancer(id string) error {
	if err := available(); err != nil {
		return err
	}
	lb, err := hcn.GetLoadBalancerByID(id)
	if hcn.IsNotFoundError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up HNS load balancer %s: %w", id, err)
	}
	if err := lb.Delete(); err != nil && !hcn.IsNotFoundError(err) {
		return fmt.Errorf("delete HNS load balancer %s: %w", id, err)
	}
	return nil
}

// NetworkEndpoints lists the endpoints of a network.
func (Client) NetworkEndpoints(networkID string) ([]NetworkEndpoint, error) {
	if err := available(); err != nil {
		return nil, err
	}
	eps, err := hcn.ListEndpointsOfNetwork(networkID)
	if err != nil {
		return nil, fmt.Errorf("list the endpoints of HNS network %s: %w", networkID, err)
	}
	out := make([]NetworkEndpoint, 0, len(eps))
	for i := range eps {
		out = append(out, NetworkEndpoint{Endpoint: *fromHCNEndpoint(&eps[i]), Remote: eps[i].Flags&hcn.EndpointFlagsRemoteEndpoint != 0})
	}
	return out, nil
}
