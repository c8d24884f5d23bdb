package podnet

import (
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// fixNotOurs is the way out when a network of the name is not one
// cni-config can reuse.
func fixNotOurs(name string) string {
	return fmt.Sprintf("if edgecore.exe cni-config created it, `edgecore.exe reset --network` removes it; otherwise choose another %s, or remove it if nothing uses it: Get-HnsNetwork | Where-Object Name -eq '%s' | Remove-HnsNetwork",
		cni.FlagNetworkName, name)
}

// checkNetwork decides whether an existing network of the plan's name can
// be reused: it must be an l2bridge network with the plan's range,
// gateway and adapter. Other tools' networks (docker's and the nat
// plugin's "nat", flannel's "cbr0") are never changed.
func checkNetwork(n *hns.Network, p cni.L2BridgePlan) error {
	if !n.IsType(hns.TypeL2Bridge) {
		return &cni.FlagError{Flag: cni.FlagNetworkName, Value: p.NetworkName,
			Problem: fmt.Sprintf("is an existing HNS network of type %s, not %s", n.Type, hns.TypeL2Bridge),
			Fix:     fixNotOurs(p.NetworkName)}
	}
	var have []string
	for _, s := range n.Subnets {
		if s.Prefix.Masked() == p.Subnet && (!s.Gateway.IsValid() || s.Gateway == p.Gateway) {
			if n.Adapter != "" && !strings.EqualFold(n.Adapter, p.Adapter) {
				return &cni.FlagError{Flag: cni.FlagAdapter, Value: p.Adapter,
					Problem: fmt.Sprintf("differs from %s, the adapter of the existing l2bridge network %q", n.Adapter, p.NetworkName),
					Fix:     "use " + cni.FlagAdapter + " " + n.Adapter + "; " + fixNotOurs(p.NetworkName)}
			}
			return nil
		}
		desc := s.Prefix.String()
		if s.Gateway.IsValid() {
			desc += " (gateway " + s.Gateway.String() + ")"
		}
		have = append(have, desc)
	}
	return &cni.FlagError{Flag: cni.FlagSubnet, Value: fmt.Sprintf("%s (gateway %s)", p.Subnet, p.Gateway),
		Problem: fmt.Sprintf("differs from the existing l2bridge network %q: %s", p.NetworkName, strings.Join(have, ", ")),
		Fix:     fixNotOurs(p.NetworkName)}
}

// ensureL2Bridge creates or reuses the network and its host endpoint,
// attaches the endpoint to the host and turns forwarding on. What it
// creates is recorded in st and registers its undo in u.
func ensureL2Bridge(out io.Writer, h HNS, p cni.L2BridgePlan, prev State, st *State, u *steps.Undos) error {
	n, err := h.NetworkByName(p.NetworkName)
	if err != nil {
		return err
	}
	createdNet := false
	switch {
	case n != nil:
		if err := checkNetwork(n, p); err != nil {
			return err
		}
		fmt.Fprintf(out, "HNS network %q (%s, %s) exists; reusing it\n", n.Name, n.Type, p.Subnet)
	default:
		fmt.Fprintf(out, "creating HNS network %q (%s, %s, gateway %s) on adapter %q; the host is off the network for a few seconds\n",
			p.NetworkName, hns.TypeL2Bridge, p.Subnet, p.Gateway, p.Adapter)
		n, err = h.CreateNetwork(hns.NetworkSpec{Name: p.NetworkName, Type: hns.TypeL2Bridge, Subnet: p.Subnet,
			Gateway: p.Gateway, Adapter: p.Adapter, HostIP: p.NodeIP})
		if n != nil {
			// Also when the network came up badly: it is ours to remove.
			id := n.ID
			u.Push(fmt.Sprintf("remove HNS network %q", p.NetworkName), func() error { return h.DeleteNetwork(id) })
		}
		if err != nil {
			return err
		}
		createdNet = true
	}
	st.Network = &Object{Name: n.Name, ID: n.ID, Created: createdNet || owned(prev.Network, n.ID)}

	e, err := h.EndpointByName(p.EndpointName)
	if err != nil {
		return err
	}
	created := false
	switch {
	case e != nil && (e.NetworkID != n.ID || e.IP != p.EndpointIP):
		return &cni.FlagError{Flag: cni.FlagNetworkName, Value: p.NetworkName,
			Problem: fmt.Sprintf("has the host endpoint name %q, which an existing HNS endpoint (%s) of another network or address has", p.EndpointName, e.IP),
			Fix:     fmt.Sprintf("remove that endpoint (Get-HnsEndpoint | Where-Object Name -eq '%s' | Remove-HnsEndpoint), or choose another %s", p.EndpointName, cni.FlagNetworkName)}
	case e != nil:
		fmt.Fprintf(out, "host endpoint %q (%s) exists; reusing it\n", e.Name, e.IP)
	default:
		fmt.Fprintf(out, "creating host endpoint %q (%s) on %q\n", p.EndpointName, p.EndpointIP, p.NetworkName)
		e, err = h.CreateEndpoint(n.ID, hns.EndpointSpec{Name: p.EndpointName, IP: p.EndpointIP, Prefix: p.Subnet.Bits()})
		if err != nil {
			return err
		}
		id := e.ID
		u.Push(fmt.Sprintf("remove HNS endpoint %q", p.EndpointName), func() error { return h.DeleteEndpoint(id) })
		created = true
	}
	st.Endpoint = &Object{Name: e.Name, ID: e.ID, IP: e.IP.String(), Created: created || owned(prev.Endpoint, e.ID)}

	if err := h.AttachHost(e.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "host endpoint %q is attached to the host as \"vEthernet (%s)\"\n", e.Name, e.Name)
	// The endpoint is the pods' gateway: it receives their packets for
	// other hosts, and the host's adapter sends them on.
	for _, a := range []netip.Addr{p.EndpointIP, p.NodeIP} {
		if err := h.EnableForwarding(a); err != nil {
			return err
		}
		i, err := h.Forwarding(a)
		if err != nil {
			return err
		}
		if !i.Forwarding {
			return fmt.Errorf("forwarding on %q (%s) is still off after enabling it; enable it by hand: Set-NetIPInterface -InterfaceAlias '%s' -AddressFamily IPv4 -Forwarding Enabled", i.Name, a, i.Name)
		}
		fmt.Fprintf(out, "forwarding is on for %q (%s)\n", i.Name, a)
	}
	return nil
}

func owned(o *Object, id string) bool { return o != nil && o.Created && o.ID == id }
