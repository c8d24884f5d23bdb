package cni

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// goodConf is a working nat config; cases below change one thing in it.
const goodConf = `{
  "cniVersion": "0.2.0",
  "name": "nat",
  "type": "nat",
  "ipam": {"subnet": "10.244.1.0/24", "routes": [{"gw": "10.244.1.1"}]},
  "dns": {"nameservers": ["10.0.0.2"]},
  "capabilities": {"portMappings": true}
}`

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conf       string
		clusterDNS []string
		want       []string // Finding.String() of each finding, in order
	}{
		{name: "good", conf: goodConf},
		{name: "keys in other case are read as the plugin reads them",
			conf: strings.NewReplacer(`"gw"`, `"GW"`, `"nameservers"`, `"Nameservers"`, `"10.244.1.1"`, `"10.244.2.1"`).Replace(goodConf),
			want: []string{`error: ipam.routes[0].gw 10.244.2.1 lies outside the subnet 10.244.1.0/24, so the host cannot reach the pods; use an address inside 10.244.1.0/24, e.g. "10.244.1.1"`}},
		{name: "sample with runtime DNS and a gateway outside",
			conf: `{"cniVersion": "0.2.0", "name": "nat", "type": "nat", "master": "Ethernet",
			  "ipam": {"subnet": "172.21.208.0/20", "routes": [{"GW": "172.21.224.1"}]},
			  "capabilities": {"portMappings": true, "dns": true}}`,
			want: []string{
				`error: ipam.routes[0].gw 172.21.224.1 lies outside the subnet 172.21.208.0/20, so the host cannot reach the pods; use an address inside 172.21.208.0/20, e.g. "172.21.208.1"`,
				`warning: capabilities.dns is true, so each pod gets the DNS servers edged passes instead of dns.nameservers; without clusterDNS that is 127.0.0.1, the container itself, and no name resolves; remove "dns" from capabilities and list servers in dns.nameservers, or set modules.edged.tailoredKubeletConfig.clusterDNS`,
			}},
		{name: "runtime DNS with clusterDNS set", clusterDNS: []string{"169.254.96.16"},
			conf: strings.Replace(goodConf, `"portMappings": true`, `"portMappings": true, "dns": true`, 1)},
		{name: "clusterDNS set but not relayed", clusterDNS: []string{"169.254.96.16"}, conf: goodConf,
			want: []string{`warning: capabilities.dns is not set, so pods ignore clusterDNS (169.254.96.16) and resolve only through dns.nameservers; add "dns": true to capabilities if pods must resolve cluster names`}},
		{name: "no nameservers", conf: strings.Replace(goodConf, `"10.0.0.2"`, ``, 1),
			want: []string{`error: dns.nameservers is empty and capabilities.dns is not set, so containers get no DNS server; add "dns": {"nameservers": ["<DNS server IP>"]}, or rewrite the file with edgecore.exe cni-config`}},
		{name: "loopback nameserver", conf: strings.Replace(goodConf, `"10.0.0.2"`, `"127.0.0.1"`, 1),
			want: []string{`error: dns.nameservers[0] 127.0.0.1 is a loopback address, which inside a container is the container itself; use a DNS server reachable from the host's network`}},
		{name: "gateway is the broadcast address", conf: strings.Replace(goodConf, `"10.244.1.1"`, `"10.244.1.255"`, 1),
			want: []string{`error: ipam.routes[0].gw 10.244.1.255 is the broadcast address of 10.244.1.0/24; use an address inside 10.244.1.0/24, e.g. "10.244.1.1"`}},
		{name: "host-local style gateway", conf: strings.Replace(goodConf, `"routes"`, `"gateway": "10.244.1.0", "routes"`, 1),
			want: []string{`error: ipam.gateway 10.244.1.0 is the network address of 10.244.1.0/24; use an address inside 10.244.1.0/24, e.g. "10.244.1.1"`}},
		{name: "no gateway route: the plugin takes the first address", conf: strings.Replace(goodConf, `[{"gw": "10.244.1.1"}]`, `[]`, 1)},
		{name: "subnet missing", conf: strings.Replace(goodConf, `"subnet": "10.244.1.0/24", `, ``, 1),
			want: []string{`error: ipam.subnet is missing; the nat plugin needs the pod address range; add "subnet": "10.244.1.0/24" (a range no host interface uses), or rewrite the file with edgecore.exe cni-config`}},
		{name: "subnet with host bits", conf: strings.Replace(goodConf, `"10.244.1.0/24"`, `"10.244.1.9/24"`, 1),
			want: []string{`warning: ipam.subnet "10.244.1.9/24" has host bits set; the network it lies in is 10.244.1.0/24; write "subnet": "10.244.1.0/24"`}},
		{name: "version the nat plugin refuses", conf: strings.Replace(goodConf, `"0.2.0"`, `"0.3.1"`, 1),
			want: []string{`error: cniVersion is "0.3.1", which the nat plugin refuses (it accepts 0.2.0, 0.3.0, 0.4.0, 1.0.0); use "cniVersion": "0.2.0"`}},
		{name: "missing name and type", conf: strings.NewReplacer(`"name": "nat",`, ``, `"type": "nat",`, ``).Replace(goodConf),
			want: []string{
				`error: name is missing; containerd refuses a network without a name; add "name": "nat", or rewrite the file with edgecore.exe cni-config`,
				`error: type is missing, so containerd cannot tell which plugin to run; add "type": "nat", or rewrite the file with edgecore.exe cni-config`,
			}},
		{name: "syntax error", conf: "{\n  \"cniVersion\": \"0.2.0\",\n  \"name\": \"nat\"\n  \"type\": \"nat\"\n}",
			want: []string{`error: the file is not valid JSON: invalid character '"' after object key:value pair at line 4, column 3; correct the JSON there, or rewrite the file with edgecore.exe cni-config`}},
		{name: "wrong type", conf: strings.Replace(goodConf, `[{"gw": "10.244.1.1"}]`, `{"gw": "10.244.1.1"}`, 1),
			want: []string{`error: ipam.routes is a JSON object where a list is expected; correct its type, or rewrite the file with edgecore.exe cni-config`}},
		{name: "not an object", conf: `["nat"]`,
			want: []string{`error: the file is a JSON array, not an object; write the network config as a JSON object, or rewrite the file with edgecore.exe cni-config`}},
		{name: "empty", conf: " \r\n",
			want: []string{`error: the file is empty; write the network config into it, or rewrite the file with edgecore.exe cni-config`}},
		{name: "UTF-8 byte-order mark", conf: "\xEF\xBB\xBF" + goodConf,
			want: []string{`error: the file starts with a UTF-8 byte-order mark, which containerd cannot parse; save it without a byte-order mark (Set-Content -Encoding ascii), or rewrite the file with edgecore.exe cni-config`}},
		{name: "UTF-16 from PowerShell", conf: utf16LE(goodConf),
			want: []string{`error: the file is UTF-16, which containerd cannot parse; save it without a byte-order mark (Set-Content -Encoding ascii), or rewrite the file with edgecore.exe cni-config`}},
		{name: "good conflist with a chained plugin",
			conf: `{"cniVersion": "0.3.0", "name": "nat", "plugins": [
			  {"type": "nat", "ipam": {"subnet": "10.244.1.0/24"}, "dns": {"nameservers": ["10.0.0.2"]}},
			  {"type": "portmap", "capabilities": {"portMappings": true}}]}`},
		{name: "conflist reports its version once and names the plugin",
			conf: `{"name": "nat", "plugins": [
			  {"type": "nat", "ipam": {"subnet": "10.244.1.0/24", "routes": [{"gw": "10.0.0.1"}]}, "dns": {"nameservers": ["10.0.0.2"]}},
			  {"type": "portmap"}]}`,
			want: []string{
				`error: cniVersion is missing; add "cniVersion": "0.2.0"`,
				`error: plugins[0].ipam.routes[0].gw 10.0.0.1 lies outside the subnet 10.244.1.0/24, so the host cannot reach the pods; use an address inside 10.244.1.0/24, e.g. "10.244.1.1"`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range Validate([]byte(tc.conf), ValidateOptions{ClusterDNS: tc.clusterDNS}) {
				got = append(got, f.String())
				if f.Fix == "" || strings.ContainsAny(f.Fix, "\r\n") {
					t.Errorf("finding %q needs a one-line fix", f)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

func TestPickConfFile(t *testing.T) {
	loaded, ignored := PickConfFile([]string{"README.txt", "10-flannel.conflist", "0-containerd-nat.json", "0-containerd-nat.conf", "nat.conf.bak"})
	if loaded != "0-containerd-nat.conf" || strings.Join(ignored, ",") != "0-containerd-nat.json,10-flannel.conflist" {
		t.Errorf("loaded %q, ignored %q", loaded, ignored)
	}
	if loaded, _ := PickConfFile([]string{"nat.conf.bak"}); loaded != "" {
		t.Errorf("loaded %q from a dir without config files", loaded)
	}
}

func TestValidateNamesWrongTypes(t *testing.T) {
	for conf, want := range map[string]string{
		`{"cniVersion": 2, "name": "nat", "type": "nat"}`:                                                                            "error: cniVersion is a JSON number where a string is expected",
		`{"cniVersion": "0.2.0", "name": "nat", "plugins": ["nat"]}`:                                                                 "error: plugins[0] is a JSON string, not an object; write each plugin as a JSON object",
		`{"cniVersion": "0.2.0", "name": "nat", "type": "nat", "ipam": {"subnet": "10.244.1.0/24"}, "capabilities": {"dns": "yes"}}`: `error: capabilities.dns is "yes" where true or false is expected; write "dns": false, or remove it`,
	} {
		got := Validate([]byte(conf), ValidateOptions{})
		if len(got) == 0 || !strings.HasPrefix(got[0].String(), want) {
			t.Errorf("%s\n got: %v\nwant: %s...", conf, got, want)
		}
	}
}

func TestPodDNS(t *testing.T) {
	for name, tc := range map[string]struct {
		conf    string
		servers []string
		relays  bool
		err     bool
	}{
		"a plugin":          {conf: `{"type":"nat","dns":{"Nameservers":["10.0.0.2"]}}`, servers: []string{"10.0.0.2"}},
		"a list's first":    {conf: `{"plugins":[{"type":"win-bridge","dns":{"nameservers":["10.244.2.2"]},"capabilities":{"dns":true}},{"type":"portmap","dns":{"nameservers":["9.9.9.9"]}}]}`, servers: []string{"10.244.2.2"}, relays: true},
		"no DNS":            {conf: `{"type":"nat"}`},
		"a capability typo": {conf: `{"type":"nat","capabilities":{"dns":"yes"}}`, err: true},
		"not JSON":          {conf: `{`, err: true},
	} {
		t.Run(name, func(t *testing.T) {
			servers, relays, err := PodDNS([]byte(tc.conf))
			if (err != nil) != tc.err || !slices.Equal(servers, tc.servers) || relays != tc.relays {
				t.Errorf("PodDNS = %v, %v, %v; want %v, %v, error %v", servers, relays, err, tc.servers, tc.relays, tc.err)
			}
		})
	}
}
