package cni

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

var lan = []HostNetwork{
	{Interface: "Ethernet", Address: netip.MustParsePrefix("192.168.1.20/24")},
	{Interface: "vEthernet (Default Switch)", Address: netip.MustParsePrefix("172.17.96.1/20")},
}

func TestGenerateRefuses(t *testing.T) {
	host := []string{"192.168.1.1"}
	for _, tc := range []struct {
		name string
		opts Options
		want string // the whole message the operator reads
	}{
		{"no subnet", Options{HostDNS: host},
			"--subnet: is required; give the pod address range of this node, e.g. --subnet 10.244.1.0/24"},
		{"address without length", Options{Subnet: "10.244.1.0", HostDNS: host},
			"--subnet 10.244.1.0: is an address, not a range; add the prefix length, e.g. --subnet 10.244.1.0/24"},
		{"malformed", Options{Subnet: "10.244.1/24", HostDNS: host},
			"--subnet 10.244.1/24: is not a CIDR; write it as address/length, e.g. --subnet 10.244.1.0/24"},
		{"IPv6", Options{Subnet: "fd00:10::/64", HostDNS: host},
			"--subnet fd00:10::/64: is IPv6, which the nat network does not support; give an IPv4 range, e.g. --subnet 10.244.1.0/24"},
		{"host bits", Options{Subnet: "10.244.1.1/24", HostDNS: host},
			"--subnet 10.244.1.1/24: has host bits set; use --subnet 10.244.1.0/24 (with --gateway 10.244.1.1 if that address was meant as the gateway)"},
		{"too small", Options{Subnet: "10.244.1.0/31", HostDNS: host},
			"--subnet 10.244.1.0/31: leaves no address for containers once the network, gateway and broadcast addresses are taken; use a prefix of /30 or shorter, e.g. --subnet 10.244.1.0/24"},
		{"loopback", Options{Subnet: "127.1.0.0/16", HostDNS: host},
			"--subnet 127.1.0.0/16: overlaps the loopback (127.0.0.0/8) range; use a private range, e.g. --subnet 10.244.1.0/24"},
		{"overlaps LAN", Options{Subnet: "192.168.0.0/16", HostDNS: host, HostNetworks: lan},
			`--subnet 192.168.0.0/16: overlaps 192.168.1.0/24 on host interface "Ethernet"; pick a range no host interface uses (see ipconfig), e.g. --subnet 10.244.1.0/24`},
		{"overlaps Default Switch", Options{Subnet: "172.16.0.0/12", HostDNS: host, HostNetworks: lan},
			`--subnet 172.16.0.0/12: overlaps 172.17.96.0/20 on host interface "vEthernet (Default Switch)"; pick a range no host interface uses (see ipconfig), e.g. --subnet 10.244.1.0/24`},
		{"suggestion avoids the host", Options{Subnet: "10.0.0.0/8", HostDNS: host,
			HostNetworks: []HostNetwork{{Interface: "Ethernet", Address: netip.MustParsePrefix("10.244.1.7/23")}}},
			`--subnet 10.0.0.0/8: overlaps 10.244.0.0/23 on host interface "Ethernet"; pick a range no host interface uses (see ipconfig), e.g. --subnet 10.244.2.0/24`},
		{"differs from existing nat", Options{Subnet: "10.244.1.0/24", HostDNS: host,
			HostNetworks: []HostNetwork{{Interface: "vEthernet (nat)", Address: netip.MustParsePrefix("172.29.192.1/20")}}},
			"--subnet 10.244.1.0/24: differs from 172.29.192.0/20 of the existing vEthernet (nat) adapter; the plugin reuses that network and pods would get addresses the config does not describe; " +
				"use --subnet 172.29.192.0/20, or remove the old network first (Get-HnsNetwork | Where-Object Name -eq nat | Remove-HnsNetwork)"},
		{"gateway outside", Options{Subnet: "10.244.1.0/24", Gateway: "10.244.2.1", HostDNS: host},
			"--gateway 10.244.2.1: lies outside --subnet 10.244.1.0/24, so the host could not reach the pods; use an address inside the subnet, e.g. --gateway 10.244.1.1, or omit --gateway"},
		{"gateway is network address", Options{Subnet: "10.244.1.0/24", Gateway: "10.244.1.0", HostDNS: host},
			"--gateway 10.244.1.0: is the network address of 10.244.1.0/24; use a host address, e.g. --gateway 10.244.1.1, or omit --gateway"},
		{"gateway is broadcast", Options{Subnet: "10.244.1.0/24", Gateway: "10.244.1.255", HostDNS: host},
			"--gateway 10.244.1.255: is the broadcast address of 10.244.1.0/24; use a host address, e.g. --gateway 10.244.1.1, or omit --gateway"},
		{"gateway with length", Options{Subnet: "10.244.1.0/24", Gateway: "10.244.1.1/24", HostDNS: host},
			"--gateway 10.244.1.1/24: has a prefix length; give the address alone, e.g. --gateway 10.244.1.1"},
		{"gateway not an address", Options{Subnet: "10.244.1.0/24", Gateway: "gw.local", HostDNS: host},
			"--gateway gw.local: is not an IPv4 address; give an address inside 10.244.1.0/24, e.g. --gateway 10.244.1.1"},
		{"gateway differs from nat adapter", Options{Subnet: "172.29.192.0/20", Gateway: "172.29.192.9", HostDNS: host,
			HostNetworks: []HostNetwork{{Interface: "VETHERNET (NAT)", Address: netip.MustParsePrefix("172.29.192.1/20")}}},
			"--gateway 172.29.192.9: differs from 172.29.192.1, the address of the existing vEthernet (nat) adapter that the plugin will reuse; use --gateway 172.29.192.1 or omit --gateway"},
		{"no DNS at all", Options{Subnet: "10.244.1.0/24"},
			"--dns: is not given and the host has no DNS server a container can use; name the DNS servers for containers, e.g. --dns 10.0.0.2"},
		{"only unusable host DNS", Options{Subnet: "10.244.1.0/24", HostDNS: []string{"fec0:0:0:ffff::1", "127.0.0.1"}},
			"--dns: is not given and none of the host's DNS servers (fec0:0:0:ffff::1, 127.0.0.1) is an IPv4 address a container can reach; name the DNS servers for containers, e.g. --dns 10.0.0.2"},
		{"DNS not an address", Options{Subnet: "10.244.1.0/24", DNS: []string{"dns.google"}},
			"--dns dns.google: is not an IP address; give the DNS server's IPv4 address, e.g. --dns 10.0.0.2"},
		{"DNS loopback", Options{Subnet: "10.244.1.0/24", DNS: []string{"127.0.0.1"}},
			"--dns 127.0.0.1: is a loopback address, which inside a container is the container itself; give a DNS server reachable from the host's network, e.g. --dns 10.0.0.2"},
		{"DNS IPv6", Options{Subnet: "10.244.1.0/24", DNS: []string{"2001:4860:4860::8888"}},
			"--dns 2001:4860:4860::8888: is IPv6, which containers on the IPv4 nat network cannot reach; give a DNS server reachable from the host's network, e.g. --dns 10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Generate(tc.opts)
			if err == nil {
				t.Fatalf("accepted, wrote:\n%s", out)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tc.want)
			}
			var fe *FlagError
			if !errors.As(err, &fe) || !strings.HasPrefix(tc.want, fe.Flag) {
				t.Errorf("error %T does not name the flag as a *FlagError", err)
			}
		})
	}
}

func TestGenerateGateway(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		wantG string
	}{
		{"first usable by default", Options{Subnet: "10.244.1.0/24"}, `"gw": "10.244.1.1"`},
		{"smallest subnet", Options{Subnet: "10.244.1.4/30"}, `"gw": "10.244.1.5"`},
		{"explicit last host", Options{Subnet: "10.244.1.4/30", Gateway: "10.244.1.6"}, `"gw": "10.244.1.6"`},
		{"existing nat adapter's address", Options{Subnet: "172.29.192.0/20",
			HostNetworks: []HostNetwork{{Interface: "vEthernet (nat)", Address: netip.MustParsePrefix("172.29.200.7/20")}}}, `"gw": "172.29.200.7"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.DNS = []string{"10.0.0.2"}
			out, err := Generate(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tc.wantG) {
				t.Errorf("want %s in\n%s", tc.wantG, out)
			}
			// What the record keeps as the host's address on the network.
			subnet, gw, err := NATAddresses(out)
			if err != nil || subnet.String() != netip.MustParsePrefix(tc.opts.Subnet).Masked().String() || !strings.Contains(tc.wantG, `"`+gw.String()+`"`) {
				t.Errorf("NATAddresses = %s, %s, %v", subnet, gw, err)
			}
		})
	}
}

// The seed's two traps must never be written: no capabilities.dns, and
// nameservers always present.
func TestGenerateNeverRelaysRuntimeDNS(t *testing.T) {
	out, err := Generate(Options{Subnet: "10.244.1.0/24", HostDNS: []string{"10.0.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, `"dns": true`) || !strings.Contains(s, `"nameservers": [`) {
		t.Errorf("unexpected DNS settings in\n%s", s)
	}
}

func TestHostNetworksOf(t *testing.T) {
	// The address Windows reports on the nat adapter, as net.Interface.Addrs
	// returns it (a 16-byte IP with a 4-byte mask), must keep its prefix.
	_, n, _ := parseCIDRNet("172.29.200.7/20")
	got := hostNetworksOf("vEthernet (nat)", n)
	if len(got) != 1 || got[0].Address.String() != "172.29.200.7/20" {
		t.Errorf("got %v", got)
	}
}

func parseCIDRNet(s string) (netip.Prefix, []net.Addr, error) {
	ip, ipn, err := net.ParseCIDR(s)
	if err != nil {
		return netip.Prefix{}, nil, err
	}
	ipn.IP = ip.To16()
	v6 := &net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)}
	return netip.MustParsePrefix(s), []net.Addr{ipn, v6}, nil
}
