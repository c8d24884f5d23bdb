package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// wcnVersions are the cniVersions the windows-container-networking plugins
// (nat, sdnbridge, sdnoverlay) accept; their CNI library refuses any other
// with "incompatible CNI versions" when the first pod starts.
var (
	wcnPlugins  = map[string]bool{"nat": true, "sdnbridge": true, "sdnoverlay": true}
	wcnVersions = []string{"0.2.0", "0.3.0", "0.4.0", "1.0.0"}
)

// checkPlugin checks one network config. version is the file's cniVersion
// (a conflist's applies to all its plugins); main is false for chained
// plugins, which have no DNS of their own.
func checkPlugin(p fileConf, prefix string, version *string, o ValidateOptions, main bool) []Finding {
	var out []Finding
	typ := strings.ToLower(strings.TrimSpace(p.Type))
	if typ == "" {
		out = append(out, errorf(prefix+"type", "is missing, so containerd cannot tell which plugin to run", "add \"type\": \"nat\", "+regenerate))
	}
	switch {
	case version == nil || strings.TrimSpace(*version) == "":
		out = append(out, errorf("cniVersion", "is missing", "add \"cniVersion\": \""+CNIVersion+"\""))
	case wcnPlugins[typ] && !contains(wcnVersions, *version):
		out = append(out, errorf("cniVersion", fmt.Sprintf("is %q, which the %s plugin refuses (it accepts %s)", *version, typ, strings.Join(wcnVersions, ", ")),
			"use \"cniVersion\": \""+CNIVersion+"\""))
	}
	out = append(out, checkIPAM(p.IPAM, prefix+"ipam.", typ)...)
	out = append(out, checkPolicyKey(p, prefix, typ)...)
	if main {
		out = append(out, checkDNS(p, prefix, o)...)
	}
	return out
}

func checkIPAM(ip fileIPAM, prefix, typ string) []Finding {
	if strings.TrimSpace(ip.Subnet) == "" {
		if typ == "nat" {
			return []Finding{errorf(prefix+"subnet", "is missing; the nat plugin needs the pod address range",
				"add \"subnet\": \""+exampleSubnet+"\" (a range no host interface uses), "+regenerate)}
		}
		return nil // another IPAM (host-local ranges, DHCP) decides
	}
	subnet, err := netip.ParsePrefix(strings.TrimSpace(ip.Subnet))
	if err != nil {
		return []Finding{errorf(prefix+"subnet", fmt.Sprintf("%q is not a CIDR", ip.Subnet), "write it as address/length, e.g. \""+exampleSubnet+"\"")}
	}
	var out []Finding
	if subnet != subnet.Masked() {
		out = append(out, warnf(prefix+"subnet", fmt.Sprintf("%q has host bits set; the network it lies in is %s", ip.Subnet, subnet.Masked()),
			"write \"subnet\": \""+subnet.Masked().String()+"\""))
		subnet = subnet.Masked()
	}
	// The nat plugin takes its gateway from the first route only.
	if len(ip.Routes) > 0 && strings.TrimSpace(ip.Routes[0].GW) != "" {
		out = append(out, checkGateway(prefix+"routes[0].gw", ip.Routes[0].GW, subnet)...)
	}
	if strings.TrimSpace(ip.Gateway) != "" {
		out = append(out, checkGateway(prefix+"gateway", ip.Gateway, subnet)...)
	}
	return out
}

// checkGateway is the seed's trap: containerd's sample for Windows computes
// a gateway outside the subnet, the plugin accepts it, and the host then
// cannot reach its pods.
func checkGateway(field, value string, subnet netip.Prefix) []Finding {
	gw, err := netip.ParseAddr(strings.TrimSpace(value))
	example := firstUsable(subnet).String()
	fix := "use an address inside " + subnet.String() + ", e.g. \"" + example + "\""
	switch {
	case err != nil:
		return []Finding{errorf(field, fmt.Sprintf("%q is not an IP address", value), fix)}
	case !subnet.Contains(gw):
		return []Finding{errorf(field, fmt.Sprintf("%s lies outside the subnet %s, so the host cannot reach the pods", gw, subnet), fix)}
	case gw == subnet.Addr():
		return []Finding{errorf(field, fmt.Sprintf("%s is the network address of %s", gw, subnet), fix)}
	case gw.Is4() && gw == broadcastAddr(subnet):
		return []Finding{errorf(field, fmt.Sprintf("%s is the broadcast address of %s", gw, subnet), fix)}
	}
	return nil
}

func checkDNS(p fileConf, prefix string, o ValidateOptions) []Finding {
	var out []Finding
	for i, ns := range p.DNS.Nameservers {
		field := fmt.Sprintf("%sdns.nameservers[%d]", prefix, i)
		a, err := netip.ParseAddr(strings.TrimSpace(ns))
		switch {
		case err != nil:
			out = append(out, errorf(field, fmt.Sprintf("%q is not an IP address", ns), "write the DNS server's IP address"))
		case a.IsLoopback():
			out = append(out, errorf(field, a.String()+" is a loopback address, which inside a container is the container itself",
				"use a DNS server reachable from the host's network"))
		}
	}
	runtimeDNS := false
	if raw, ok := p.Capabilities["dns"]; ok {
		if err := json.Unmarshal(raw, &runtimeDNS); err != nil {
			return append(out, errorf(prefix+"capabilities.dns", "is "+string(raw)+" where true or false is expected", "write \"dns\": false, or remove it"))
		}
	}
	switch {
	case runtimeDNS && len(o.ClusterDNS) == 0:
		out = append(out, warnf(prefix+"capabilities.dns", "is true, so each pod gets the DNS servers edged passes instead of dns.nameservers; "+
			"without clusterDNS that is 127.0.0.1, the container itself, and no name resolves",
			"remove \"dns\" from capabilities and list servers in dns.nameservers, or set modules.edged.tailoredKubeletConfig.clusterDNS"))
	case !runtimeDNS && len(p.DNS.Nameservers) == 0:
		out = append(out, errorf(prefix+"dns.nameservers", "is empty and capabilities.dns is not set, so containers get no DNS server",
			"add \"dns\": {\"nameservers\": [\"<DNS server IP>\"]}, "+regenerate))
	case !runtimeDNS && len(o.ClusterDNS) > 0:
		out = append(out, warnf(prefix+"capabilities.dns", "is not set, so pods ignore clusterDNS ("+strings.Join(o.ClusterDNS, ", ")+
			") and resolve only through dns.nameservers",
			"add \"dns\": true to capabilities if pods must resolve cluster names"))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == strings.TrimSpace(s) {
			return true
		}
	}
	return false
}

// checkPolicyKey catches policies under the key the plugin does not read:
// the OutBoundNAT exceptions and routes of an l2bridge network then never
// apply, and pods reach other nodes' pods with the host's address or not
// at all. Configs written for one plugin and run with the other (as the
// Upstream-ToR notes do, AdditionalArgs under win-bridge) look complete.
func checkPolicyKey(p fileConf, prefix, typ string) []Finding {
	switch {
	case typ == PluginWinBridge && len(p.AdditionalArgs) > 0 && len(p.Policies) == 0:
		return []Finding{errorf(prefix+"AdditionalArgs", "is ignored by win-bridge, which reads HNS policies from \"policies\", so its OutBoundNAT exceptions and routes never apply",
			"rewrite the file with edgecore.exe cni-config --mode l2bridge --plugin win-bridge")}
	case wcnPlugins[typ] && len(p.Policies) > 0 && len(p.AdditionalArgs) == 0:
		return []Finding{errorf(prefix+"policies", "is ignored by "+typ+", which reads HNS policies from \"AdditionalArgs\", so its OutBoundNAT exceptions and routes never apply",
			"rewrite the file with edgecore.exe cni-config --mode l2bridge")}
	}
	return nil
}
