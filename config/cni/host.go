package cni

import (
	"fmt"
	"net"
	"net/netip"
)

// HostNetworks lists the IPv4 networks configured on the host's interfaces,
// for Options.HostNetworks. Loopback is left out: parseSubnet refuses it
// anyway, and it is on every host.
func HostNetworks() ([]HostNetwork, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	var out []HostNetwork
	for _, iface := range ifaces {
		if iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of interface %q: %w", iface.Name, err)
		}
		out = append(out, hostNetworksOf(iface.Name, addrs)...)
	}
	return out, nil
}

func hostNetworksOf(name string, addrs []net.Addr) []HostNetwork {
	var out []HostNetwork
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		ones, bits := ipn.Mask.Size()
		if !ok || bits == 0 {
			continue
		}
		ip = ip.Unmap()
		if !ip.Is4() {
			continue
		}
		if bits == 128 {
			ones -= 96
		}
		if ones < 0 {
			continue
		}
		out = append(out, HostNetwork{Interface: name, Address: netip.PrefixFrom(ip, ones)})
	}
	return out
}
