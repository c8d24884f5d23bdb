package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/redact"
)

// validateNetwork checks the address, range and port fields of the
// enabled modules for what Go's listeners and dialers, the kubelet and
// Windows accept: an IP field parses as an IP, a range as a CIDR, a port
// lies in 1-65535, and a host:port or URL field has a host and such a
// port. Upstream checks none of them, and a bad value otherwise shows
// only as a module that fails to listen or connect after start. The
// rules are the same on every OS.
func validateNetwork(c *v1alpha2.EdgeCoreConfig) field.ErrorList {
	var errs field.ErrorList
	add := func(err *field.Error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	m := c.Modules
	if e := m.Edged; e != nil && e.Enable {
		p := field.NewPath("modules", "edged")
		add(ipField(p.Child("nodeIP"), e.NodeIP, "the address other hosts reach this node at, such as 192.168.1.20"))
		if k := e.TailoredKubeletConfig; k != nil {
			kp := p.Child("tailoredKubeletConfig")
			add(ipField(kp.Child("address"), k.Address, "0.0.0.0 to serve on every interface, or one of this host's addresses"))
			for i, d := range k.ClusterDNS {
				add(ipField(kp.Child("clusterDNS").Index(i), d, "the cluster DNS service's IP, such as 10.96.0.10"))
			}
			if k.PodCIDR != "" {
				if _, _, err := net.ParseCIDR(k.PodCIDR); err != nil {
					add(field.Invalid(kp.Child("podCIDR"), k.PodCIDR, "not a CIDR range: write it as address/prefix, such as 10.244.2.0/24, or remove the line"))
				}
			}
			// 0 is refused by validateKubeletServer, which says why.
			if k.ReadOnlyPort != 0 {
				add(portField(kp.Child("readOnlyPort"), int(k.ReadOnlyPort), "10350, the port upstream's cloudstream names (edgecore serves the kubelet server on a pipe or socket only administrators can open, not on TCP)"))
			}
		}
	}
	if h := m.EdgeHub; h != nil && h.Enable {
		p := field.NewPath("modules", "edgeHub")
		add(urlField(p.Child("httpServer"), h.HTTPServer, "https", "cloudcore's certificate port, such as https://192.168.1.10:10002"))
		if h.WebSocket != nil && h.WebSocket.Enable {
			add(hostPortField(p.Child("websocket", "server"), h.WebSocket.Server, false, "cloudcore's hub, such as 192.168.1.10:10000"))
		}
		if h.Quic != nil && h.Quic.Enable {
			add(hostPortField(p.Child("quic", "server"), h.Quic.Server, false, "cloudcore's QUIC hub, such as 192.168.1.10:10001"))
		}
	}
	if b := m.EventBus; b != nil && b.Enable {
		p := field.NewPath("modules", "eventBus")
		add(urlField(p.Child("mqttServerExternal"), b.MqttServerExternal, "tcp", "the MQTT broker, such as tcp://127.0.0.1:1883"))
		add(urlField(p.Child("mqttServerInternal"), b.MqttServerInternal, "tcp", "the internal MQTT broker, such as tcp://127.0.0.1:1884"))
	}
	if mm := m.MetaManager; mm != nil && mm.Enable && mm.MetaServer != nil && mm.MetaServer.Enable {
		p := field.NewPath("modules", "metaManager", "metaServer")
		add(hostPortField(p.Child("server"), mm.MetaServer.Server, false, "a local address, such as 127.0.0.1:10550"))
		add(hostPortField(p.Child("dummyServer"), mm.MetaServer.DummyServer, true, "the dummy interface's address, such as 169.254.30.10:10550"))
	}
	if s := m.ServiceBus; s != nil && s.Enable {
		p := field.NewPath("modules", "serviceBus")
		add(ipField(p.Child("server"), s.Server, "the address to serve on, such as 127.0.0.1"))
		add(portField(p.Child("port"), s.Port, "a free port, such as 9060"))
	}
	if s := m.EdgeStream; s != nil && s.Enable {
		add(hostPortField(field.NewPath("modules", "edgeStream", "server"), s.TunnelServer, false, "cloudcore's stream port, such as 192.168.1.10:10004"))
	}
	return errs
}

// ipField checks an optional IP address.
func ipField(p *field.Path, v, example string) *field.Error {
	if v == "" || net.ParseIP(v) != nil {
		return nil
	}
	return field.Invalid(p, v, "not an IP address: use "+example)
}

// portField checks a port number.
func portField(p *field.Path, v int, example string) *field.Error {
	if v >= 1 && v <= 65535 {
		return nil
	}
	return field.Invalid(p, v, "a port lies between 1 and 65535: use "+example)
}

// hostPortField checks host:port; ipOnly requires the host to be an IP.
// An empty value is left to the module's own checks.
func hostPortField(p *field.Path, v string, ipOnly bool, example string) *field.Error {
	if v == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return field.Invalid(p, v, "not host:port (an IPv6 address goes in brackets, [fd00::1]:10000): use "+example)
	}
	return checkHostPort(p, v, host, port, ipOnly, example)
}

func checkHostPort(p *field.Path, v, host, port string, ipOnly bool, example string) *field.Error {
	if host == "" {
		return field.Invalid(p, v, "the host is missing: use "+example)
	}
	if why := hostProblem(host, ipOnly); why != "" {
		return field.Invalid(p, v, why+"; fix: use "+example)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return field.Invalid(p, v, fmt.Sprintf("the port %q does not lie between 1 and 65535: use %s", port, example))
	}
	return nil
}

// urlField checks an optional URL of scheme with a host and a port. The
// value an error quotes is the URL without its credentials (redact.URL):
// field errors are printed, logged and sent in job statuses.
func urlField(p *field.Path, v, scheme, example string) *field.Error {
	if v == "" {
		return nil
	}
	shown := redact.URL(v)
	u, err := url.Parse(v)
	if err != nil || u.Scheme != scheme || u.Host == "" {
		return field.Invalid(p, shown, fmt.Sprintf("not a %s:// URL with a host and a port: use %s", scheme, example))
	}
	if u.User != nil {
		return field.Invalid(p, shown, fmt.Sprintf("a user name or password in the URL is not used, and would show in logs: remove it; use %s", example))
	}
	if u.Port() == "" {
		return field.Invalid(p, shown, "the port is missing: use "+example)
	}
	return checkHostPort(p, shown, u.Hostname(), u.Port(), false, example)
}

// hostProblem is the one judgement of the host of a host:port or URL, for
// every field and flag that names one: "" for an IP address or a host
// name (an IP address only, when ipOnly), otherwise why it is neither.
//
// A host that ends in a number is an IPv4 address or nothing: no
// top-level domain is a number, and resolvers read such names in the old
// inet_aton forms (1.2.3 is 1.2.0.3, 010.1.1.1 is octal for 8.1.1.1,
// 0x7f.1 is 127.0.0.1), which net.ParseIP refuses; 999.1.1.1 would be
// asked of DNS as a name. Either way the connection would not go where the
// operator wrote, so such a host is refused as the address it looks like.
func hostProblem(host string, ipOnly bool) string {
	switch {
	case net.ParseIP(host) != nil:
		return ""
	case endsInNumber(host):
		return fmt.Sprintf("%s is not an IPv4 address (each of the four numbers is 0 to 255, written without leading zeros), "+
			"and a host name does not end in a number", host)
	case ipOnly:
		return fmt.Sprintf("%q is not an IP address", host)
	case !validHostName(host):
		return fmt.Sprintf("%q is neither an IP address nor a host name", host)
	}
	return ""
}

// endsInNumber reports whether the last label of h (a final dot aside) is
// a decimal or 0x hexadecimal number, as inet_aton would read it.
func endsInNumber(h string) bool {
	h = strings.TrimSuffix(h, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	digits := "0123456789"
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		last, digits = last[2:], "0123456789abcdefABCDEF"
		if last == "" {
			return true // "0x" alone is 0 to inet_aton
		}
	}
	return last != "" && strings.Trim(last, digits) == ""
}

// validHostName accepts a DNS name: labels of letters, digits and
// hyphens, not starting or ending with a hyphen.
func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
