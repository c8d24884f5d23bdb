package cni

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
)

// DefaultMaster is the adapter name containerd's sample config carries.
const DefaultMaster = "Ethernet"

// HostNetwork is an IPv4 address configured on a host interface, with its
// prefix length, e.g. 192.168.1.20/24 on "Ethernet".
type HostNetwork struct {
	Interface string
	Address   netip.Prefix
}

// Options are the inputs of cni-config.
type Options struct {
	// Subnet is --subnet, the pods' IPv4 range. Required.
	Subnet string
	// Gateway is --gateway; empty means the first usable address of Subnet,
	// or the address of the existing nat adapter when there is one.
	Gateway string
	// DNS is --dns; empty means HostDNS.
	DNS []string
	// HostDNS are the host's resolvers, used when DNS is empty.
	HostDNS []string
	// HostNetworks are the host's own IPv4 networks, which the pod range
	// must not overlap. The nat adapter (NATInterfaceName) is the one
	// exception: the plugin reuses that network, so Subnet must equal it.
	HostNetworks []HostNetwork
	// Master is written as "master"; empty means DefaultMaster.
	Master string
}

// Generate returns the content of a nat CNI config for containerd on
// Windows, or a *FlagError naming the flag to change.
func Generate(o Options) ([]byte, error) {
	subnet, err := parseSubnet(o.Subnet, ModeNAT)
	if err != nil {
		return nil, err
	}
	natAdapter, err := checkHostNetworks(subnet, o.HostNetworks)
	if err != nil {
		return nil, err
	}
	gw := firstUsable(subnet)
	if natAdapter.IsValid() {
		gw = natAdapter
	}
	if strings.TrimSpace(o.Gateway) != "" {
		if gw, err = parseGateway(o.Gateway, subnet); err != nil {
			return nil, err
		}
		if natAdapter.IsValid() && gw != natAdapter {
			return nil, &FlagError{Flag: FlagGateway, Value: o.Gateway,
				Problem: "differs from " + natAdapter.String() + ", the address of the existing " + NATInterfaceName + " adapter that the plugin will reuse",
				Fix:     "use " + FlagGateway + " " + natAdapter.String() + " or omit " + FlagGateway}
		}
	}
	servers, err := pickNameservers(o.DNS, o.HostDNS, ModeNAT)
	if err != nil {
		return nil, err
	}
	master := o.Master
	if master == "" {
		master = DefaultMaster
	}
	conf := netConf{
		CNIVersion:   CNIVersion,
		Name:         NetworkName,
		Type:         NetworkName,
		Master:       master,
		IPAM:         ipam{Subnet: subnet.String(), Routes: []route{{GW: gw.String()}}},
		DNS:          dns{Nameservers: servers},
		Capabilities: capabilities{PortMappings: true},
	}
	out, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// checkHostNetworks refuses a subnet that overlaps a host network and
// returns the nat adapter's address when the subnet is that adapter's.
func checkHostNetworks(subnet netip.Prefix, hosts []HostNetwork) (netip.Addr, error) {
	var natAdapter netip.Addr
	for _, h := range hosts {
		if !h.Address.IsValid() || !h.Address.Addr().Is4() {
			continue
		}
		hostNet := h.Address.Masked()
		if strings.EqualFold(h.Interface, NATInterfaceName) {
			if hostNet == subnet {
				natAdapter = h.Address.Addr()
				continue
			}
			return netip.Addr{}, &FlagError{Flag: FlagSubnet, Value: subnet.String(),
				Problem: "differs from " + hostNet.String() + " of the existing " + NATInterfaceName + " adapter; the plugin reuses that network and pods would get addresses the config does not describe",
				Fix:     "use " + FlagSubnet + " " + hostNet.String() + ", or remove the old network first (Get-HnsNetwork | Where-Object Name -eq nat | Remove-HnsNetwork)"}
		}
		if hostNet.Overlaps(subnet) {
			return netip.Addr{}, &FlagError{Flag: FlagSubnet, Value: subnet.String(),
				Problem: "overlaps " + hostNet.String() + " on host interface \"" + h.Interface + "\"",
				Fix:     "pick a range no host interface uses (see ipconfig), e.g. " + FlagSubnet + " " + suggestFree(hosts)}
		}
	}
	return natAdapter, nil
}

// suggestFree offers a /24 that overlaps none of the host's networks, so
// the error's example can be typed as it is.
func suggestFree(hosts []HostNetwork) string {
	for _, base := range []string{"10.244.0.0/16", "10.245.0.0/16", "192.168.0.0/16"} {
		b := netip.MustParsePrefix(base)
		for c := 1; c < 256; c++ {
			a := b.Addr().As4()
			a[2] = byte(c)
			cand := netip.PrefixFrom(netip.AddrFrom4(a), 24)
			free := true
			for _, h := range hosts {
				if h.Address.IsValid() && h.Address.Masked().Overlaps(cand) {
					free = false
					break
				}
			}
			if free {
				return cand.String()
			}
		}
	}
	return exampleSubnet
}

// NATAddresses reads the pod range and the gateway of a nat configuration
// Generate wrote. The host's own address on the nat network is the
// gateway: the pods' route out, and where the node's DNS responder
// answers them.
func NATAddresses(conf []byte) (netip.Prefix, netip.Addr, error) {
	var c netConf
	if err := json.Unmarshal(conf, &c); err != nil {
		return netip.Prefix{}, netip.Addr{}, err
	}
	subnet, err := netip.ParsePrefix(c.IPAM.Subnet)
	if err != nil {
		return netip.Prefix{}, netip.Addr{}, err
	}
	if len(c.IPAM.Routes) == 0 {
		return subnet, netip.Addr{}, errors.New("the configuration names no gateway")
	}
	gw, err := netip.ParseAddr(c.IPAM.Routes[0].GW)
	return subnet, gw, err
}
