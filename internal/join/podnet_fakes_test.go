package join

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// The pod network's files on a default Windows host.
const (
	cniConfDir   = ctrdDir + `\cni\conf`
	cniL2Bridge  = cniConfDir + `\` + cni.L2BridgeFileName
	cniNetRecord = ctrdDir + `\edgecore-cni-config.json`
)

// fakeHNS records the HNS calls of an l2bridge network; fail, when set,
// is the answer to every call (Wine's, or a host without the Containers
// feature).
type fakeHNS struct {
	calls     []string
	networks  map[string]*hns.Network
	endpoints map[string]*hns.Endpoint
	fail      error
}

func (h *fakeHNS) call(format string, args ...any) error {
	h.calls = append(h.calls, fmt.Sprintf(format, args...))
	return h.fail
}

func (h *fakeHNS) NetworkByName(name string) (*hns.Network, error) {
	if err := h.call("NetworkByName %s", name); err != nil {
		return nil, err
	}
	return h.networks[name], nil
}
func (h *fakeHNS) CreateNetwork(s hns.NetworkSpec) (*hns.Network, error) {
	if err := h.call("CreateNetwork %s %s on %s", s.Name, s.Subnet, s.Adapter); err != nil {
		return nil, err
	}
	n := &hns.Network{ID: "net-1", Name: s.Name, Type: s.Type, Adapter: s.Adapter, Subnets: []hns.Subnet{{Prefix: s.Subnet, Gateway: s.Gateway}}}
	h.networks[s.Name] = n
	return n, nil
}
func (h *fakeHNS) DeleteNetwork(id string) error {
	for name, n := range h.networks {
		if n.ID == id {
			delete(h.networks, name)
		}
	}
	return h.call("DeleteNetwork %s", id)
}
func (h *fakeHNS) EndpointByName(name string) (*hns.Endpoint, error) {
	if err := h.call("EndpointByName %s", name); err != nil {
		return nil, err
	}
	return h.endpoints[name], nil
}
func (h *fakeHNS) CreateEndpoint(networkID string, s hns.EndpointSpec) (*hns.Endpoint, error) {
	if err := h.call("CreateEndpoint %s %s", s.Name, s.IP); err != nil {
		return nil, err
	}
	e := &hns.Endpoint{ID: "ep-1", Name: s.Name, NetworkID: networkID, IP: s.IP}
	h.endpoints[s.Name] = e
	return e, nil
}
func (h *fakeHNS) AttachHost(id string) error { return h.call("AttachHost %s", id) }
func (h *fakeHNS) DeleteEndpoint(id string) error {
	for name, e := range h.endpoints {
		if e.ID == id {
			delete(h.endpoints, name)
		}
	}
	return h.call("DeleteEndpoint %s", id)
}
func (h *fakeHNS) Forwarding(a netip.Addr) (hns.Interface, error) {
	return hns.Interface{Name: "vEthernet (" + a.String() + ")", Forwarding: true}, h.call("Forwarding %s", a)
}
func (h *fakeHNS) EnableForwarding(a netip.Addr) error { return h.call("EnableForwarding %s", a) }

// podNetHost is the fake host's network: one adapter with the node's
// address, and the fake HNS.
func (w *world) podNetHost() PodNetHost {
	if w.hns == nil {
		w.hns = &fakeHNS{networks: map[string]*hns.Network{}, endpoints: map[string]*hns.Endpoint{}}
	}
	return PodNetHost{
		Facts: podnet.HostFacts{
			Resolvers: func() ([]string, error) { return []string{"10.20.0.1"}, nil },
			Networks: func() ([]cni.HostNetwork, error) {
				return []cni.HostNetwork{{Interface: "Ethernet", Address: netip.MustParsePrefix("10.20.30.40/16")}}, nil
			},
			Adapters: func() ([]string, error) { return []string{"Ethernet"}, nil },
			RouteIP:  func() (net.IP, error) { return net.ParseIP("10.20.30.40"), nil },
			PodCIDR: func(string, config.Host) (string, error) {
				w.t.Error("join asked for the node's pod range from its database")
				return "", fmt.Errorf("no database")
			},
		},
		Env: podnet.Env{HNS: w.hns, FS: w.fs},
	}
}

// withL2Bridge gives join the quick start's network flags.
func withL2Bridge(o Options) Options {
	o.Network.Subnet = "10.244.2.0/24"
	o.Network.L2Bridge.ClusterCIDR = "10.244.0.0/16"
	o.Network.L2Bridge.ServiceCIDR = "10.96.0.0/12"
	o.Network.DNS = []string{"10.96.0.10"}
	return o
}
