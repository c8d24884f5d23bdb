package podnet

import (
	"fmt"
	"net/netip"

	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// HNS is what the l2bridge network needs from the Host Networking Service;
// hns.Client is the real one. Lookups return nil, nil for an object that
// does not exist.
type HNS interface {
	NetworkByName(name string) (*hns.Network, error)
	CreateNetwork(spec hns.NetworkSpec) (*hns.Network, error)
	DeleteNetwork(id string) error
	EndpointByName(name string) (*hns.Endpoint, error)
	CreateEndpoint(networkID string, spec hns.EndpointSpec) (*hns.Endpoint, error)
	// AttachHost makes the endpoint a host adapter; attaching an attached
	// endpoint is not an error.
	AttachHost(endpointID string) error
	DeleteEndpoint(id string) error
	// Forwarding describes the host interface that has addr.
	Forwarding(addr netip.Addr) (hns.Interface, error)
	EnableForwarding(addr netip.Addr) error
	// The load balancers and remote endpoints the node's kernelspace
	// proxier programs on the network (RemoveProxierObjects).
	LoadBalancers() ([]hns.LoadBalancer, error)
	DeleteLoadBalancer(id string) error
	NetworkEndpoints(networkID string) ([]hns.NetworkEndpoint, error)
}

// writeFile replaces path atomically through fsys (hostfs.FS.WriteFile),
// creating its directory first: cni-config writes into containerd's
// folders, which a host may not have yet.
func writeFile(fsys hostfs.FS, goos, path string, data []byte) error {
	if err := fsys.MkdirAll(ospath.Dir(goos, path)); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	return fsys.WriteFile(path, data)
}

// ContainerdVersion asks the installed containerd for its version; it
// decides the keys of a config.toml edit.
type ContainerdVersion func() (containerd.Runtime, error)
