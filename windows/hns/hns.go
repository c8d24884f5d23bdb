// Package hns is the thin adapter over the Windows Host Networking Service
// (github.com/Microsoft/hcsshim/hcn) and the IP interface settings that an
// l2bridge pod network needs: its HNS network, the host's endpoint on it,
// and IP forwarding on the host's interfaces. The decisions (what to
// create, reuse, refuse or remove) are made by the caller through its own
// interface; this package only carries them out. Off Windows every call
// returns ErrNotWindows.
package hns

import (
	"errors"
	"net/netip"
	"strings"
)

// ErrNotWindows is returned by every call on a system without HNS (Linux,
// and Wine, which has no Host Networking Service either).
var ErrNotWindows = errors.New("the Host Networking Service (HNS) exists on Windows only")

// ErrUnavailable is returned on a Windows host whose HNS does not offer
// its v2 API: one without the Containers feature (or Wine).
var ErrUnavailable = errors.New("the Host Networking Service does not offer its v2 API")

// TypeL2Bridge is the HNS network type of an l2bridge network.
const TypeL2Bridge = "L2Bridge"

// Network is an HNS network as HNS reports it.
type Network struct {
	ID   string
	Name string
	// Type as HNS writes it: L2Bridge, NAT, ICS, Transparent, Overlay, ...
	Type    string
	Subnets []Subnet
	// Adapter is the host adapter the network is bound to, when HNS says.
	Adapter string
}

// IsType reports whether n is of HNS type t; HNS is not consistent in
// its capitals.
func (n Network) IsType(t string) bool { return strings.EqualFold(n.Type, t) }

// Subnet is an address range of a network and its gateway.
type Subnet struct {
	Prefix  netip.Prefix
	Gateway netip.Addr
}

// NetworkSpec is a network to create.
type NetworkSpec struct {
	Name    string
	Type    string
	Subnet  netip.Prefix
	Gateway netip.Addr
	// Adapter is the host adapter to bind an L2Bridge network to.
	Adapter string
	// HostIP is the host's address on Adapter. Binding the adapter moves
	// it to "vEthernet (<adapter>)" and the host is off the network for a
	// few seconds; CreateNetwork returns once the address is back.
	HostIP netip.Addr
}

// Endpoint is an HNS endpoint.
type Endpoint struct {
	ID        string
	Name      string
	NetworkID string
	IP        netip.Addr
}

// EndpointSpec is an endpoint to create, with a fixed address.
type EndpointSpec struct {
	Name   string
	IP     netip.Addr
	Prefix int // prefix length of the network's subnet
}

// Interface is a host IP interface and whether it forwards IPv4 packets.
type Interface struct {
	Name       string
	Index      int
	Forwarding bool
}

// LoadBalancing is what the host's HNS offers Kubernetes' kernelspace
// proxier: its v2 API (Windows Server 2019 and later), per-client session
// affinity, load balancers updated in place, direct server return.
type LoadBalancing struct {
	APIV2, SessionAffinity, ModifyLoadBalancer, DSR bool
}

// LoadBalancer is an HNS load balancer: its frontend addresses (none for
// a node port's) and the IDs of its backend endpoints.
type LoadBalancer struct {
	ID          string
	Frontends   []string
	EndpointIDs []string
}

// NetworkEndpoint is an endpoint of a network as reset reads it: Remote
// marks one standing for a pod on another host, which only the proxier
// creates.
type NetworkEndpoint struct {
	Endpoint
	Remote bool
}
