package podnet

import (
	"net/netip"
	"os"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/containerd"
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
}

// FS is the file system as cni-config uses it.
type FS interface {
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces path atomically, creating its directory.
	WriteFile(path string, data []byte) error
	Remove(path string) error
}

// OSFS is the host's file system.
type OSFS struct{}

func (OSFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
func (OSFS) WriteFile(path string, data []byte) error {
	return config.WriteNewFile(path, data, 0o644, true)
}
func (OSFS) Remove(path string) error { return os.Remove(path) }

// ContainerdVersion asks the installed containerd for its version; it
// decides the keys of a config.toml edit.
type ContainerdVersion func() (containerd.Runtime, error)
