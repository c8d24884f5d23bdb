package cni

import (
	"net/netip"
	"strings"
)

// pickNameservers returns the DNS servers for the config: the --dns values
// when given, the host's resolvers otherwise. An explicit value that cannot
// work is refused; a host resolver that cannot work is skipped, because
// Windows lists placeholders (fec0:0:0:ffff::1 and friends) on hosts
// without DHCPv6 that no container on an IPv4 nat network can reach.
// network names the pod network in messages ("nat", "l2bridge").
func pickNameservers(explicit, host []string, network string) ([]string, error) {
	if len(explicit) > 0 {
		var out []string
		for _, s := range explicit {
			s = strings.TrimSpace(s)
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, &FlagError{Flag: FlagDNS, Value: s, Problem: "is not an IP address",
					Fix: "give the DNS server's IPv4 address, e.g. " + FlagDNS + " 10.0.0.2"}
			}
			if problem := unusableNameserver(a, network); problem != "" {
				return nil, &FlagError{Flag: FlagDNS, Value: s, Problem: problem,
					Fix: "give a DNS server reachable from the host's network, e.g. " + FlagDNS + " 10.0.0.2"}
			}
			out = appendNew(out, a.String())
		}
		return out, nil
	}
	var out, skipped []string
	for _, s := range host {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil || unusableNameserver(a, network) != "" {
			skipped = append(skipped, s)
			continue
		}
		out = appendNew(out, a.String())
	}
	if len(out) == 0 {
		problem := "is not given and the host has no DNS server a container can use"
		if len(skipped) > 0 {
			problem = "is not given and none of the host's DNS servers (" + strings.Join(skipped, ", ") +
				") is an IPv4 address a container can reach"
		}
		return nil, &FlagError{Flag: FlagDNS, Problem: problem,
			Fix: "name the DNS servers for containers, e.g. " + FlagDNS + " 10.0.0.2"}
	}
	return out, nil
}

// unusableNameserver says why a container on the IPv4 pod network could
// not query a, or "" if it can. Loopback would point at the container
// itself.
func unusableNameserver(a netip.Addr, network string) string {
	a = a.Unmap()
	switch {
	case !a.Is4():
		return "is IPv6, which containers on the IPv4 " + network + " network cannot reach"
	case a.IsLoopback():
		return "is a loopback address, which inside a container is the container itself"
	case a.IsUnspecified(), a.IsMulticast(), a.IsLinkLocalUnicast(), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "is not a unicast address a container can reach"
	}
	return ""
}

func appendNew(list []string, s string) []string {
	for _, have := range list {
		if have == s {
			return list
		}
	}
	return append(list, s)
}
