package join

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config/proxyenv"
)

// ProxyOptions are --proxy and --no-proxy.
type ProxyOptions struct {
	URL     string
	NoProxy []string
}

// AddFlags binds the proxy flags.
func (o *ProxyOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.URL, "proxy", o.URL, "HTTP(S) proxy for the containerd and edgecore services (image pulls): http://[user:password@]host:port. "+
		"Loopback, this node's addresses, the pod and service ranges (--cluster-cidr and --service-cidr, required with it) and cloudcore bypass it")
	fs.StringSliceVar(&o.NoProxy, "no-proxy", o.NoProxy, "Hosts, .domains and CIDR ranges that bypass --proxy, besides the defaults")
}

// proxyEnvironment is the services' environment for --proxy, nil without
// one: NO_PROXY with this node's addresses, its pod range and the cluster's
// pod and service ranges (the network flags, which Validate requires with
// --proxy), and cloudcore's host. It reads the configuration, j.cfg.
func (j *Join) proxyEnvironment() []string {
	p := j.o.Proxy
	if p.URL == "" {
		return nil
	}
	n := j.o.Network
	// The node's addresses: the one the configuration gives the kubelet
	// (--set modules.edged.nodeIP, for a node on another interface) and
	// the one this host reaches cloudcore from.
	var nodes []string
	if m := j.cfg.Modules; m != nil && m.Edged != nil && m.Edged.NodeIP != "" {
		nodes = append(nodes, m.Edged.NodeIP)
	}
	if j.o.Host.NodeIP != "" {
		nodes = append(nodes, j.o.Host.NodeIP)
	}
	var cloud []string
	for _, a := range []string{j.hubAddr, j.certAddr, j.tunnelAddr} {
		if h, _, err := net.SplitHostPort(a); err == nil && h != "" {
			cloud = append(cloud, h)
		}
	}
	return proxyenv.Environment(proxyenv.Inputs{
		Proxy: p.URL, NoProxy: p.NoProxy,
		PodRanges: nonEmpty(n.Subnet, n.L2Bridge.ClusterCIDR), ServiceRanges: nonEmpty(n.L2Bridge.ServiceCIDR),
		NodeAddresses: nodes, CloudHosts: cloud,
	})
}

func nonEmpty(list ...string) []string {
	var out []string
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// proxyLine says what the services' environment is, credentials hidden.
func proxyLine(env []string) string {
	if len(env) == 0 {
		return ""
	}
	shown := make([]string, len(env))
	for i, l := range env {
		shown[i] = proxyenv.Redacted(l)
	}
	return fmt.Sprintf("; its environment, and the bundled containerd's: %s", strings.Join(shown, " "))
}

// printProxy says which services get the proxy: the host's own containerd
// is the operator's, and join leaves its environment alone.
func (j *Join) printProxy(out io.Writer) {
	if len(j.svc.Environment) == 0 {
		return
	}
	if j.rt != nil && j.rt.Installs() {
		fmt.Fprintf(out, "Proxy: %s for the edgecore and containerd services; NO_PROXY %s.\n",
			proxyenv.Redacted(j.svc.Environment[0])[len("HTTP_PROXY="):], strings.TrimPrefix(j.svc.Environment[2], "NO_PROXY="))
		return
	}
	fmt.Fprintf(out, "Proxy: %s for the edgecore service only: the host's containerd keeps its own environment; "+
		"give it the same with `reg add HKLM\\SYSTEM\\CurrentControlSet\\Services\\containerd /v Environment /t REG_MULTI_SZ /d HTTP_PROXY=...\\0HTTPS_PROXY=...\\0NO_PROXY=...` and restart it.\n",
		proxyenv.Redacted(j.svc.Environment[0])[len("HTTP_PROXY="):])
}
