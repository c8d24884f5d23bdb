package cni

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upstreamToR is the host of the Upstream-ToR notes: a LAN adapter and a
// node network adapter, eth1, that the pods are bridged to.
func upstreamToR() L2BridgeOptions {
	return L2BridgeOptions{
		Subnet:      "10.160.11.0/24",
		ClusterCIDR: "10.160.0.0/12",
		ServiceCIDR: "10.176.0.0/12",
		DNS:         []string{"10.176.0.10"},
		DNSSearch:   []string{"svc.cluster.local", "cluster.local"},
		Adapter:     "eth1",
		Adapters:    []string{"eth0", "eth1", "Loopback Pseudo-Interface 1", "vEthernet (nat)"},
		HostNetworks: []HostNetwork{
			{Interface: "eth0", Address: netip.MustParsePrefix("172.16.126.216/24")},
			{Interface: "eth1", Address: netip.MustParsePrefix("100.100.126.216/23")},
			{Interface: "vEthernet (nat)", Address: netip.MustParsePrefix("172.29.192.1/20")},
		},
	}
}

func TestL2BridgeGolden(t *testing.T) {
	for _, plugin := range []string{PluginSDNBridge, PluginWinBridge} {
		t.Run(plugin, func(t *testing.T) {
			o := upstreamToR()
			o.Plugin = plugin
			p, err := PlanL2Bridge(o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Gateway.String() != "10.160.11.1" || p.EndpointIP.String() != "10.160.11.2" || p.NodeIP.String() != "100.100.126.216" ||
				p.HostSubnet.String() != "100.100.126.0/23" || p.EndpointName != "edgecore-l2bridge-host" || p.Adapter != "eth1" {
				t.Errorf("plan: %+v", p)
			}
			path := filepath.Join("testdata", "l2bridge-"+plugin+".golden")
			if *update {
				if err := os.WriteFile(path, p.Conf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(p.Conf, want) {
				t.Errorf("output differs from %s\n--- got\n%s--- want\n%s", path, p.Conf, want)
			}
			if findings := Validate(p.Conf, ValidateOptions{}); len(findings) != 0 {
				t.Errorf("the generated file fails its own validation: %v", findings)
			}
		})
	}
}

// The exceptions and routes are what makes pod addresses routable: the
// cluster's ranges leave with the pod's address, the service range and the
// node's own address go through the host.
func TestL2BridgePolicies(t *testing.T) {
	p, err := PlanL2Bridge(upstreamToR())
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		IPAM struct {
			Routes []struct{ GW string } `json:"routes"`
		} `json:"ipam"`
		AdditionalArgs []struct {
			Value struct {
				Type     string
				Settings struct {
					Exceptions        []string
					DestinationPrefix string
					NeedEncap         bool
				}
			}
		}
	}
	if err := json.Unmarshal(p.Conf, &c); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range c.AdditionalArgs {
		s := a.Value.Settings
		got = append(got, a.Value.Type+" "+strings.Join(s.Exceptions, ",")+s.DestinationPrefix)
		if a.Value.Type == "SDNRoute" && !s.NeedEncap {
			t.Errorf("route %s without NeedEncap", s.DestinationPrefix)
		}
	}
	want := "OutBoundNAT 10.160.0.0/12,10.176.0.0/12|SDNRoute 10.176.0.0/12|SDNRoute 100.100.126.216/32"
	if strings.Join(got, "|") != want {
		t.Errorf("policies %q, want %q", strings.Join(got, "|"), want)
	}
	if len(c.IPAM.Routes) != 1 || c.IPAM.Routes[0].GW != "10.160.11.2" {
		t.Errorf("pods' gateway must be the host endpoint: %+v", c.IPAM.Routes)
	}
	hint := strings.Join(p.RouteHint(), "\n")
	for _, w := range []string{"on the router of 100.100.126.0/23: a static route to 10.160.11.0/24 via 100.100.126.216",
		"ip route add 10.160.11.0/24 via 100.100.126.216", "hold 10.160.11.1/24 as a keepalived address"} {
		if !strings.Contains(hint, w) {
			t.Errorf("route hint lacks %q:\n%s", w, hint)
		}
	}
}

func TestL2BridgeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*L2BridgeOptions)
		want string
	}{
		{"gateway outside the subnet", func(o *L2BridgeOptions) { o.Gateway = "10.160.12.1" },
			"--gateway 10.160.12.1: lies outside --subnet 10.160.11.0/24, so the host could not reach the pods; use an address inside the subnet, e.g. --gateway 10.160.11.1, or omit --gateway"},
		{"pod range overlaps the host subnet", func(o *L2BridgeOptions) {
			o.Subnet, o.ClusterCIDR = "100.100.127.0/24", "100.100.0.0/16"
		}, `--subnet 100.100.127.0/24: overlaps the host subnet 100.100.126.0/23 on "eth1"; give this node's pod range from the cluster, which no host network may use (see ipconfig)`},
		{"pod range is the host subnet, the host's address that of the endpoint", func(o *L2BridgeOptions) {
			o.Subnet, o.ClusterCIDR = "100.100.126.0/24", "100.100.0.0/16"
			o.HostNetworks[1].Address = netip.MustParsePrefix("100.100.126.2/24")
		}, `--subnet 100.100.126.0/24: overlaps the host subnet 100.100.126.0/24 on "eth1"; give this node's pod range from the cluster, which no host network may use (see ipconfig)`},
		{"pod range overlaps the service range", func(o *L2BridgeOptions) { o.ServiceCIDR = "10.160.11.0/24" },
			"--subnet 10.160.11.0/24: overlaps --service-cidr 10.160.11.0/24; service addresses would be handed to pods; give this node's pod range from the cluster (kubectl get node <name> -o jsonpath={.spec.podCIDR}), or correct --service-cidr"},
		{"service range overlaps the cluster range", func(o *L2BridgeOptions) { o.ServiceCIDR = "10.170.0.0/16" },
			"--service-cidr 10.170.0.0/16: overlaps --cluster-cidr 10.160.0.0/12; give the cluster's service range (kube-apiserver --service-cluster-ip-range), e.g. --service-cidr 10.96.0.0/12"},
		{"pod range outside the cluster range", func(o *L2BridgeOptions) { o.ClusterCIDR = "10.244.0.0/16" },
			"--subnet 10.160.11.0/24: lies outside --cluster-cidr 10.244.0.0/16, so pods' traffic to other nodes' pods would be NATed; give this node's pod range from the cluster (kubectl get node <name> -o jsonpath={.spec.podCIDR}), or correct --cluster-cidr"},
		{"adapter that does not exist", func(o *L2BridgeOptions) { o.Adapter = "Ethernet" },
			"--adapter Ethernet: is not a network adapter of this host; name one of this host's adapters: eth0, eth1"},
		{"adapter without an address", func(o *L2BridgeOptions) { o.HostNetworks = o.HostNetworks[:1] },
			"--adapter eth1: has no IPv4 address, so other hosts have nothing to route the pods' range to; give the adapter that connects this node to the other nodes, or configure its address first"},
		{"no adapter", func(o *L2BridgeOptions) { o.Adapter = "" },
			"--adapter: is required: no adapter carries the default route; name the adapter to bridge the pods to, e.g. --adapter Ethernet (see Get-NetAdapter)"},
		{"no cluster range", func(o *L2BridgeOptions) { o.ClusterCIDR = "" },
			"--cluster-cidr: is required for an l2bridge network; give the cluster's range, e.g. --cluster-cidr 10.244.0.0/16"},
		{"service range not a CIDR", func(o *L2BridgeOptions) { o.ServiceCIDR = "10.96.0.10" },
			"--service-cidr 10.96.0.10: is not a CIDR; write it as address/length, e.g. --service-cidr 10.96.0.0/12"},
		{"too small for gateway, endpoint and pods", func(o *L2BridgeOptions) { o.Subnet = "10.160.11.0/30" },
			"--subnet 10.160.11.0/30: leaves no address for pods once the gateway and the host endpoint are taken; use the node's pod range, a /29 or larger, e.g. --subnet 10.160.11.0/24"},
		{"IPv6 pod range", func(o *L2BridgeOptions) { o.Subnet = "fd00::/64" },
			"--subnet fd00::/64: is IPv6, which the l2bridge network does not support; give an IPv4 range, e.g. --subnet 10.244.1.0/24"},
		{"unknown plugin", func(o *L2BridgeOptions) { o.Plugin = "flannel" },
			"--plugin flannel: is not a plugin for l2bridge networks; use --plugin sdnbridge (windows-container-networking, beside nat.exe) or --plugin win-bridge (containernetworking/plugins)"},
		{"network named nat", func(o *L2BridgeOptions) { o.NetworkName = "nat" },
			`--network-name nat: cannot name an l2bridge network (quotes and slashes are not allowed, and "nat" is the nat plugin's); use e.g. --network-name edgecore-l2bridge`},
		{"DNS IPv6", func(o *L2BridgeOptions) { o.DNS = []string{"fd00::10"} },
			"--dns fd00::10: is IPv6, which containers on the IPv4 l2bridge network cannot reach; give a DNS server reachable from the host's network, e.g. --dns 10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := upstreamToR()
			tc.edit(&o)
			_, err := PlanL2Bridge(o)
			if err == nil {
				t.Fatal("accepted")
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

// Once the network exists, the host's address has moved to
// "vEthernet (<adapter>)" and the host endpoint has an address of the pod
// range: a second run must accept both.
func TestL2BridgeRerun(t *testing.T) {
	o := upstreamToR()
	o.HostNetworks = []HostNetwork{
		{Interface: "eth0", Address: netip.MustParsePrefix("172.16.126.216/24")},
		{Interface: "vEthernet (eth1)", Address: netip.MustParsePrefix("100.100.126.216/23")},
		{Interface: "vEthernet (edgecore-l2bridge-host)", Address: netip.MustParsePrefix("10.160.11.2/24")},
	}
	first, err := PlanL2Bridge(upstreamToR())
	if err != nil {
		t.Fatal(err)
	}
	again, err := PlanL2Bridge(o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Conf, again.Conf) || again.NodeIP != first.NodeIP {
		t.Errorf("second run differs:\n%s\n%s", first.Conf, again.Conf)
	}
}

func TestValidatePolicyKey(t *testing.T) {
	// The notes' config: win-bridge with sdnbridge's AdditionalArgs.
	notes := `{"cniVersion": "0.2.0", "name": "l2bridge", "type": "win-bridge",
	  "dns": {"Nameservers": ["10.176.0.10"]},
	  "AdditionalArgs": [{"Name": "EndpointPolicy", "Value": {"Type": "OutBoundNAT", "ExceptionList": ["10.160.0.0/12"]}}]}`
	got := Validate([]byte(notes), ValidateOptions{})
	if len(got) != 1 || got[0].String() != `error: AdditionalArgs is ignored by win-bridge, which reads HNS policies from "policies", so its OutBoundNAT exceptions and routes never apply; rewrite the file with edgecore.exe cni-config --mode l2bridge --plugin win-bridge` {
		t.Errorf("findings: %v", got)
	}
	sdn := strings.NewReplacer(`"win-bridge"`, `"sdnbridge"`, `"AdditionalArgs"`, `"policies"`).Replace(notes)
	if got := Validate([]byte(sdn), ValidateOptions{}); len(got) != 1 || !strings.HasPrefix(got[0].String(), "error: policies is ignored by sdnbridge") {
		t.Errorf("findings: %v", got)
	}
}

func TestDefaultAdapter(t *testing.T) {
	hosts := []HostNetwork{
		{Interface: "Ethernet 2", Address: netip.MustParsePrefix("172.16.126.216/24")},
		{Interface: "vEthernet (Ethernet)", Address: netip.MustParsePrefix("100.100.126.216/23")},
		{Interface: "vEthernet (nat)", Address: netip.MustParsePrefix("172.29.192.1/20")},
	}
	adapters := []string{"Ethernet", "Ethernet 2", "vEthernet (Ethernet)", "vEthernet (nat)"}
	for ip, want := range map[string]string{
		"100.100.126.216": "Ethernet",   // bridged already: the adapter behind the switch
		"172.16.126.216":  "Ethernet 2", // a plain adapter
		"172.29.192.1":    "vEthernet (nat)",
		"10.1.1.1":        "",
	} {
		if got := DefaultAdapter(netip.MustParseAddr(ip), hosts, adapters); got != want {
			t.Errorf("%s: got %q, want %q", ip, got, want)
		}
	}
}
