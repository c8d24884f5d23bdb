package cni

import (
	"fmt"
	"net/netip"
	"strings"
)

// Flag names as the operator types them; errors name the flag to change.
const (
	FlagSubnet  = "--subnet"
	FlagGateway = "--gateway"
	FlagDNS     = "--dns"
)

// FlagError is a refused command-line value: which flag, what is wrong with
// it and, in one line, what to type instead.
type FlagError struct {
	Flag    string
	Value   string
	Problem string
	Fix     string
}

func (e *FlagError) Error() string {
	subject := e.Flag
	if e.Value != "" {
		subject += " " + e.Value
	}
	return fmt.Sprintf("%s: %s; %s", subject, e.Problem, e.Fix)
}

// exampleSubnet is a private range that Windows itself does not hand out
// (Hyper-V's Default Switch and Docker's nat take ranges from 172.16.0.0/12).
const exampleSubnet = "10.244.1.0/24"

// reserved ranges cannot carry pod traffic: loopback and link-local never
// leave the host, the rest are not unicast.
var reserved = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (169.254.0.0/16)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
}

// parseSubnet accepts an IPv4 CIDR naming a whole network with room for a
// gateway and at least one container. network names the pod network in
// messages.
func parseSubnet(s, network string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	bad := func(problem, fix string) error {
		return &FlagError{Flag: FlagSubnet, Value: s, Problem: problem, Fix: fix}
	}
	if s == "" {
		return netip.Prefix{}, &FlagError{Flag: FlagSubnet, Problem: "is required",
			Fix: "give the pod address range of this node, e.g. " + FlagSubnet + " " + exampleSubnet}
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		if _, aerr := netip.ParseAddr(s); aerr == nil {
			return netip.Prefix{}, bad("is an address, not a range", "add the prefix length, e.g. "+FlagSubnet+" "+s+"/24")
		}
		return netip.Prefix{}, bad("is not a CIDR", "write it as address/length, e.g. "+FlagSubnet+" "+exampleSubnet)
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, bad("is IPv6, which the "+network+" network does not support",
			"give an IPv4 range, e.g. "+FlagSubnet+" "+exampleSubnet)
	}
	if p != p.Masked() {
		fix := "use " + FlagSubnet + " " + p.Masked().String()
		if p.Addr() != broadcastAddr(p) {
			fix += " (with " + FlagGateway + " " + p.Addr().String() + " if that address was meant as the gateway)"
		}
		return netip.Prefix{}, bad("has host bits set", fix)
	}
	if p.Bits() > 30 {
		return netip.Prefix{}, bad("leaves no address for containers once the network, gateway and broadcast addresses are taken",
			"use a prefix of /30 or shorter, e.g. "+FlagSubnet+" "+netip.PrefixFrom(p.Addr(), 24).Masked().String())
	}
	for _, r := range reserved {
		if p.Overlaps(r.prefix) {
			return netip.Prefix{}, bad("overlaps the "+r.what+" range", "use a private range, e.g. "+FlagSubnet+" "+exampleSubnet)
		}
	}
	return p, nil
}

// broadcastAddr is the last address of an IPv4 prefix.
func broadcastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// firstUsable is the address the nat plugin itself falls back to.
func firstUsable(p netip.Prefix) netip.Addr {
	return p.Masked().Addr().Next()
}

// parseGateway checks an explicit --gateway against the subnet. The seed
// trap is a gateway outside the subnet: the plugin accepts it, the host
// cannot reach the pods.
func parseGateway(s string, subnet netip.Prefix) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	first := firstUsable(subnet)
	bad := func(problem, fix string) error {
		return &FlagError{Flag: FlagGateway, Value: s, Problem: problem, Fix: fix}
	}
	if strings.Contains(s, "/") {
		return netip.Addr{}, bad("has a prefix length", "give the address alone, e.g. "+FlagGateway+" "+first.String())
	}
	gw, err := netip.ParseAddr(s)
	if err != nil || !gw.Is4() {
		return netip.Addr{}, bad("is not an IPv4 address", "give an address inside "+subnet.String()+", e.g. "+FlagGateway+" "+first.String())
	}
	switch {
	case !subnet.Contains(gw):
		return netip.Addr{}, bad("lies outside "+FlagSubnet+" "+subnet.String()+", so the host could not reach the pods",
			"use an address inside the subnet, e.g. "+FlagGateway+" "+first.String()+", or omit "+FlagGateway)
	case gw == subnet.Addr():
		return netip.Addr{}, bad("is the network address of "+subnet.String(),
			"use a host address, e.g. "+FlagGateway+" "+first.String()+", or omit "+FlagGateway)
	case gw == broadcastAddr(subnet):
		return netip.Addr{}, bad("is the broadcast address of "+subnet.String(),
			"use a host address, e.g. "+FlagGateway+" "+first.String()+", or omit "+FlagGateway)
	}
	return gw, nil
}
