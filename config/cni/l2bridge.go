package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Modes of cni-config: the pod network a Windows node gets.
const (
	// ModeNAT: pods behind the host's address, reachable from the host
	// only; the nat plugin creates its HNS network itself.
	ModeNAT = "nat"
	// ModeL2Bridge: routable pod addresses on an HNS network bridged to the
	// host's adapter (the "Upstream-ToR" set-up): other hosts reach pods
	// through a route to the node's pod range.
	ModeL2Bridge = "l2bridge"
)

// Plugins that can drive an l2bridge network.
const (
	// PluginSDNBridge is windows-container-networking's sdnbridge.exe,
	// from the release nat.exe comes from. It reads HNS v2 policies from
	// "AdditionalArgs".
	PluginSDNBridge = "sdnbridge"
	// PluginWinBridge is containernetworking/plugins' win-bridge.exe. It
	// reads v1 policies from "policies", and ignores "AdditionalArgs": a
	// config written for sdnbridge (as in the Upstream-ToR notes) gets no
	// OutBoundNAT exceptions and no route under win-bridge.
	PluginWinBridge = "win-bridge"
)

// Flags of the l2bridge mode.
const (
	FlagMode        = "--mode"
	FlagAdapter     = "--adapter"
	FlagClusterCIDR = "--cluster-cidr"
	FlagServiceCIDR = "--service-cidr"
	FlagPlugin      = "--plugin"
	FlagNetworkName = "--network-name"
	FlagDNSSearch   = "--dns-search"
)

// DefaultL2BridgeNetwork names the HNS network (and the CNI network, which
// the plugins look the HNS network up by). The name marks it as created by
// edgecore, so that reset --network never touches another tool's network.
const DefaultL2BridgeNetwork = "edgecore-l2bridge"

// L2BridgeFileName is the l2bridge config's file name. It sorts before
// containerd's sample (DefaultFileName): containerd on Windows loads the
// first file only.
const L2BridgeFileName = "0-containerd-l2bridge.conf"

// HostEndpointName is the host's endpoint on network: the pods' gateway,
// which forwards their traffic to and from the host's adapter. Windows
// names its adapter "vEthernet (<name>)".
func HostEndpointName(network string) string { return network + "-host" }

// L2BridgeOptions are the inputs of cni-config --mode l2bridge. The host's
// facts (adapters, addresses, DNS servers) come in as data.
type L2BridgeOptions struct {
	// Subnet is --subnet: the node's pod range (the Node's spec.podCIDR),
	// a part of ClusterCIDR.
	Subnet string
	// Gateway is --gateway: the pod range's router address on the wire,
	// e.g. a keepalived address on the Linux side; empty means the first
	// address. The host endpoint takes the first address after it.
	Gateway string
	// ClusterCIDR and ServiceCIDR are the cluster's pod and service ranges:
	// traffic to them keeps the pod's address (no outbound NAT), and the
	// service range is routed through the host, where kube-proxy or
	// edgemesh handles it.
	ClusterCIDR string
	ServiceCIDR string
	// DNS is --dns (e.g. the cluster DNS service address); empty means
	// HostDNS.
	DNS       []string
	HostDNS   []string
	DNSSearch []string
	// Adapter is --adapter, the host adapter the network is bridged to.
	Adapter string
	// Adapters are the names of the host's network adapters.
	Adapters []string
	// HostNetworks are the host's IPv4 networks.
	HostNetworks []HostNetwork
	// Plugin is --plugin; empty means PluginSDNBridge.
	Plugin string
	// NetworkName is --network-name; empty means DefaultL2BridgeNetwork.
	NetworkName string
}

// L2BridgePlan is a checked l2bridge network: what to create in HNS, the
// CNI config to write and the route the other side needs.
type L2BridgePlan struct {
	NetworkName string
	Plugin      string
	Adapter     string
	Subnet      netip.Prefix
	// Gateway is the HNS network's gateway.
	Gateway netip.Addr
	// EndpointName and EndpointIP are the host endpoint's: the pods'
	// default gateway, with forwarding on.
	EndpointName string
	EndpointIP   netip.Addr
	// NodeIP is the host's address on Adapter (on "vEthernet (Adapter)"
	// once the network exists): where other hosts route the pod range to.
	NodeIP     netip.Addr
	HostSubnet netip.Prefix
	// ClusterCIDR and ServiceCIDR are kept out of outbound NAT.
	ClusterCIDR netip.Prefix
	ServiceCIDR netip.Prefix
	DNS         []string
	DNSSearch   []string
	// Conf is the CNI config file's content.
	Conf []byte
}

// PlanL2Bridge checks the inputs of an l2bridge network against each other
// and the host, and returns the plan, or a *FlagError naming the flag to
// change.
func PlanL2Bridge(o L2BridgeOptions) (L2BridgePlan, error) {
	p := L2BridgePlan{NetworkName: strings.TrimSpace(o.NetworkName), Plugin: strings.ToLower(strings.TrimSpace(o.Plugin))}
	if p.NetworkName == "" {
		p.NetworkName = DefaultL2BridgeNetwork
	}
	if strings.ContainsAny(p.NetworkName, `"\/`) || strings.EqualFold(p.NetworkName, NetworkName) {
		return p, &FlagError{Flag: FlagNetworkName, Value: p.NetworkName, Problem: "cannot name an l2bridge network (quotes and slashes are not allowed, and \"nat\" is the nat plugin's)",
			Fix: "use e.g. " + FlagNetworkName + " " + DefaultL2BridgeNetwork}
	}
	p.EndpointName = HostEndpointName(p.NetworkName)
	switch p.Plugin {
	case "":
		p.Plugin = PluginSDNBridge
	case PluginSDNBridge, PluginWinBridge:
	default:
		return p, &FlagError{Flag: FlagPlugin, Value: o.Plugin, Problem: "is not a plugin for l2bridge networks",
			Fix: "use " + FlagPlugin + " " + PluginSDNBridge + " (windows-container-networking, beside nat.exe) or " + FlagPlugin + " " + PluginWinBridge + " (containernetworking/plugins)"}
	}

	var err error
	if p.Subnet, err = parseSubnet(o.Subnet, ModeL2Bridge); err != nil {
		return p, err
	}
	if p.Subnet.Bits() > 29 {
		return p, &FlagError{Flag: FlagSubnet, Value: p.Subnet.String(),
			Problem: "leaves no address for pods once the gateway and the host endpoint are taken",
			Fix:     "use the node's pod range, a /29 or larger, e.g. " + FlagSubnet + " " + netip.PrefixFrom(p.Subnet.Addr(), 24).Masked().String()}
	}
	p.Gateway = firstUsable(p.Subnet)
	if strings.TrimSpace(o.Gateway) != "" {
		if p.Gateway, err = parseGateway(o.Gateway, p.Subnet); err != nil {
			return p, err
		}
	}
	p.EndpointIP = p.Gateway.Next()
	if p.EndpointIP == broadcastAddr(p.Subnet) {
		p.EndpointIP = firstUsable(p.Subnet)
	}

	if p.ClusterCIDR, err = parseRange(FlagClusterCIDR, o.ClusterCIDR, "10.244.0.0/16"); err != nil {
		return p, err
	}
	if p.ServiceCIDR, err = parseRange(FlagServiceCIDR, o.ServiceCIDR, "10.96.0.0/12"); err != nil {
		return p, err
	}
	if !p.ClusterCIDR.Contains(p.Subnet.Addr()) || p.ClusterCIDR.Bits() > p.Subnet.Bits() {
		return p, &FlagError{Flag: FlagSubnet, Value: p.Subnet.String(),
			Problem: "lies outside " + FlagClusterCIDR + " " + p.ClusterCIDR.String() + ", so pods' traffic to other nodes' pods would be NATed",
			Fix:     "give this node's pod range from the cluster (kubectl get node <name> -o jsonpath={.spec.podCIDR}), or correct " + FlagClusterCIDR}
	}
	if p.ServiceCIDR.Overlaps(p.Subnet) {
		return p, &FlagError{Flag: FlagSubnet, Value: p.Subnet.String(),
			Problem: "overlaps " + FlagServiceCIDR + " " + p.ServiceCIDR.String() + "; service addresses would be handed to pods",
			Fix:     "give this node's pod range from the cluster (kubectl get node <name> -o jsonpath={.spec.podCIDR}), or correct " + FlagServiceCIDR}
	}
	if p.ServiceCIDR.Overlaps(p.ClusterCIDR) {
		return p, &FlagError{Flag: FlagServiceCIDR, Value: p.ServiceCIDR.String(),
			Problem: "overlaps " + FlagClusterCIDR + " " + p.ClusterCIDR.String(),
			Fix:     "give the cluster's service range (kube-apiserver --service-cluster-ip-range), e.g. " + FlagServiceCIDR + " 10.96.0.0/12"}
	}

	if err := p.pickAdapter(o); err != nil {
		return p, err
	}

	if p.DNS, err = pickNameservers(o.DNS, o.HostDNS, ModeL2Bridge); err != nil {
		return p, err
	}
	for _, s := range o.DNSSearch {
		if s = strings.Trim(strings.TrimSpace(s), "."); s != "" {
			if strings.ContainsAny(s, ` /\"`) {
				return p, &FlagError{Flag: FlagDNSSearch, Value: s, Problem: "is not a DNS domain", Fix: "give domains, e.g. " + FlagDNSSearch + " svc.cluster.local,cluster.local"}
			}
			p.DNSSearch = appendNew(p.DNSSearch, s)
		}
	}
	if p.Conf, err = p.conf(); err != nil {
		return p, err
	}
	return p, nil
}

// parseRange parses a cluster-wide IPv4 range.
func parseRange(flag, s, example string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Prefix{}, &FlagError{Flag: flag, Problem: "is required for an l2bridge network",
			Fix: "give the cluster's range, e.g. " + flag + " " + example}
	}
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		return p, &FlagError{Flag: flag, Value: s, Problem: "is not a CIDR", Fix: "write it as address/length, e.g. " + flag + " " + example}
	case !p.Addr().Is4():
		return p, &FlagError{Flag: flag, Value: s, Problem: "is IPv6, which this l2bridge network does not support", Fix: "give the cluster's IPv4 range, e.g. " + flag + " " + example}
	case p != p.Masked():
		return p, &FlagError{Flag: flag, Value: s, Problem: "has host bits set", Fix: "use " + flag + " " + p.Masked().String()}
	}
	return p, nil
}

// pickAdapter checks --adapter and finds the host's address on it. Once the
// l2bridge network exists, the address sits on "vEthernet (<adapter>)" and
// the adapter itself has none.
func (p *L2BridgePlan) pickAdapter(o L2BridgeOptions) error {
	name := strings.TrimSpace(o.Adapter)
	if name == "" {
		return &FlagError{Flag: FlagAdapter, Problem: "is required: no adapter carries the default route",
			Fix: "name the adapter to bridge the pods to, e.g. " + FlagAdapter + " Ethernet (see Get-NetAdapter)"}
	}
	found := ""
	for _, a := range o.Adapters {
		if strings.EqualFold(a, name) {
			found = a
		}
	}
	if found == "" {
		var phys []string
		for _, a := range o.Adapters {
			if !strings.HasPrefix(strings.ToLower(a), "vethernet (") && !strings.HasPrefix(strings.ToLower(a), "loopback") {
				phys = append(phys, a)
			}
		}
		sort.Strings(phys)
		fix := "name one of this host's adapters (Get-NetAdapter)"
		if len(phys) > 0 {
			fix = "name one of this host's adapters: " + strings.Join(phys, ", ")
		}
		return &FlagError{Flag: FlagAdapter, Value: name, Problem: "is not a network adapter of this host", Fix: fix}
	}
	p.Adapter = found
	vnic := "vEthernet (" + found + ")"
	for _, h := range o.HostNetworks {
		if (strings.EqualFold(h.Interface, found) || strings.EqualFold(h.Interface, vnic)) && h.Address.Addr().Is4() {
			p.NodeIP, p.HostSubnet = h.Address.Addr(), h.Address.Masked()
			break
		}
	}
	if !p.NodeIP.IsValid() {
		return &FlagError{Flag: FlagAdapter, Value: found, Problem: "has no IPv4 address, so other hosts have nothing to route the pods' range to",
			Fix: "give the adapter that connects this node to the other nodes, or configure its address first"}
	}
	for _, h := range o.HostNetworks {
		if !h.Address.IsValid() || !h.Address.Addr().Is4() {
			continue
		}
		// The host endpoint of an earlier run carries an address of the
		// pod range: that is this network, not a clash. The adapter's own
		// address never is, even when it happens to be the endpoint's.
		ours := strings.EqualFold(h.Interface, "vEthernet ("+p.EndpointName+")") ||
			h.Address.Addr() == p.EndpointIP && h.Address.Masked() == p.Subnet &&
				!strings.EqualFold(h.Interface, found) && !strings.EqualFold(h.Interface, vnic)
		if ours {
			continue
		}
		if h.Address.Masked().Overlaps(p.Subnet) {
			return &FlagError{Flag: FlagSubnet, Value: p.Subnet.String(),
				Problem: "overlaps the host subnet " + h.Address.Masked().String() + " on \"" + h.Interface + "\"",
				Fix:     "give this node's pod range from the cluster, which no host network may use (see ipconfig)"}
		}
	}
	return nil
}

// RouteHint is what the operator must add outside this host so that other
// hosts reach the pods: a route to the node's pod range through the node.
func (p L2BridgePlan) RouteHint() []string {
	return []string{
		fmt.Sprintf("Other hosts reach this node's pods (%s) only through a route to that range via this node (%s). Add it where the other nodes' traffic is routed:", p.Subnet, p.NodeIP),
		fmt.Sprintf("  on the router of %s: a static route to %s via %s", p.HostSubnet, p.Subnet, p.NodeIP),
		fmt.Sprintf("  or on each Linux node: ip route add %s via %s", p.Subnet, p.NodeIP),
		fmt.Sprintf("  or, without a router to change, hold %s/%d as a keepalived address on Linux nodes of %s (windows-node-notes, Upstream-ToR): they then reach %s directly.",
			p.Gateway, p.Subnet.Bits(), p.HostSubnet, p.Subnet),
	}
}

// conf writes the CNI config for the plugin. Traffic to the cluster's pod
// and service ranges keeps the pod's address (OutBoundNAT exceptions);
// the service range and the node's own address are routed through the
// host endpoint (NeedEncap), where the service proxy and the host are.
func (p L2BridgePlan) conf() ([]byte, error) {
	exceptions := []string{p.ClusterCIDR.String(), p.ServiceCIDR.String()}
	routed := []string{p.ServiceCIDR.String(), netip.PrefixFrom(p.NodeIP, 32).String()}
	var v any
	switch p.Plugin {
	case PluginWinBridge:
		c := winBridgeConf{
			CNIVersion: CNIVersion, Name: p.NetworkName, Type: PluginWinBridge,
			// win-bridge adds ipMasqNetwork to the exceptions; unset, it
			// adds an empty entry.
			IPMasqNetwork: p.ClusterCIDR.String(),
			Capabilities:  capabilities{PortMappings: true},
			// Without an IPAM plugin HNS gives pods the network's gateway;
			// with host-local win-bridge makes the host endpoint (x.2) their
			// gateway, and the range starts after it.
			IPAM: &hostLocalIPAM{Type: "host-local", Subnet: p.Subnet.String(), RangeStart: p.firstPodIP().String(), Gateway: p.EndpointIP.String()},
			DNS:  dnsSearch{Nameservers: p.DNS, Search: p.DNSSearch},
		}
		c.Policies = append(c.Policies, v1Policy{Name: "EndpointPolicy", Value: v1PolicyValue{Type: "OutBoundNAT", ExceptionList: exceptions}})
		for _, r := range routed {
			c.Policies = append(c.Policies, v1Policy{Name: "EndpointPolicy", Value: v1PolicyValue{Type: "ROUTE", DestinationPrefix: r, NeedEncap: true}})
		}
		v = c
	default:
		c := sdnBridgeConf{
			CNIVersion: CNIVersion, Name: p.NetworkName, Type: PluginSDNBridge, Master: p.Adapter,
			Capabilities: capabilities{PortMappings: true},
			// The first route's gw is the pods' gateway: the host endpoint.
			IPAM: ipam{Subnet: p.Subnet.String(), Routes: []route{{GW: p.EndpointIP.String()}}},
			DNS:  dnsSearch{Nameservers: p.DNS, Search: p.DNSSearch},
		}
		c.AdditionalArgs = append(c.AdditionalArgs, v2Arg{Name: "EndpointPolicy", Value: v2Policy{Type: "OutBoundNAT", Settings: v2Settings{Exceptions: exceptions}}})
		for _, r := range routed {
			c.AdditionalArgs = append(c.AdditionalArgs, v2Arg{Name: "EndpointPolicy", Value: v2Policy{Type: "SDNRoute", Settings: v2Settings{DestinationPrefix: r, NeedEncap: true}}})
		}
		v = c
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// firstPodIP is the first address after the gateway and the host endpoint.
func (p L2BridgePlan) firstPodIP() netip.Addr {
	a := firstUsable(p.Subnet)
	for a == p.Gateway || a == p.EndpointIP {
		a = a.Next()
	}
	return a
}

// sdnBridgeConf is windows-container-networking's l2bridge config; field
// order is the file's.
type sdnBridgeConf struct {
	CNIVersion     string       `json:"cniVersion"`
	Name           string       `json:"name"`
	Type           string       `json:"type"`
	Master         string       `json:"master"`
	Capabilities   capabilities `json:"capabilities"`
	IPAM           ipam         `json:"ipam"`
	DNS            dnsSearch    `json:"dns"`
	AdditionalArgs []v2Arg      `json:"AdditionalArgs"`
}

type v2Arg struct {
	Name  string   `json:"Name"`
	Value v2Policy `json:"Value"`
}

type v2Policy struct {
	Type     string     `json:"Type"`
	Settings v2Settings `json:"Settings"`
}

type v2Settings struct {
	Exceptions        []string `json:"Exceptions,omitempty"`
	DestinationPrefix string   `json:"DestinationPrefix,omitempty"`
	NeedEncap         bool     `json:"NeedEncap,omitempty"`
}

// winBridgeConf is containernetworking/plugins' win-bridge config (HNS v1
// policies).
type winBridgeConf struct {
	CNIVersion    string         `json:"cniVersion"`
	Name          string         `json:"name"`
	Type          string         `json:"type"`
	IPMasqNetwork string         `json:"ipMasqNetwork"`
	Capabilities  capabilities   `json:"capabilities"`
	IPAM          *hostLocalIPAM `json:"ipam"`
	DNS           dnsSearch      `json:"dns"`
	Policies      []v1Policy     `json:"policies"`
}

type hostLocalIPAM struct {
	Type       string `json:"type"`
	Subnet     string `json:"subnet"`
	RangeStart string `json:"rangeStart"`
	Gateway    string `json:"gateway"`
}

type v1Policy struct {
	Name  string        `json:"name"`
	Value v1PolicyValue `json:"value"`
}

type v1PolicyValue struct {
	Type              string   `json:"Type"`
	ExceptionList     []string `json:"ExceptionList,omitempty"`
	DestinationPrefix string   `json:"DestinationPrefix,omitempty"`
	NeedEncap         bool     `json:"NeedEncap,omitempty"`
}

type dnsSearch struct {
	Nameservers []string `json:"nameservers"`
	Search      []string `json:"search,omitempty"`
}
