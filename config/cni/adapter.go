package cni

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// HostAdapters lists the names of the host's network interfaces, for
// L2BridgeOptions.Adapters. On Windows these are the names Get-NetAdapter
// and ipconfig show ("Ethernet", "vEthernet (nat)").
func HostAdapters() ([]string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	var out []string
	for _, iface := range ifaces {
		if iface.Flags&net.FlagLoopback == 0 {
			out = append(out, iface.Name)
		}
	}
	return out, nil
}

// DefaultAdapter is the adapter to bridge pods to when --adapter is not
// given: the one that has routeIP, the host's default-route address
// (config.DefaultRouteIP). Once an l2bridge network exists that address
// sits on its switch's host adapter, "vEthernet (<adapter>)", and the
// adapter is the one in the brackets. "" when no adapter has it.
func DefaultAdapter(routeIP netip.Addr, hosts []HostNetwork, adapters []string) string {
	for _, h := range hosts {
		if h.Address.Addr() != routeIP.Unmap() {
			continue
		}
		inner, ok := strings.CutPrefix(h.Interface, "vEthernet (")
		if inner, ok2 := strings.CutSuffix(inner, ")"); ok && ok2 {
			for _, a := range adapters {
				if strings.EqualFold(a, inner) {
					return a
				}
			}
		}
		return h.Interface
	}
	return ""
}
