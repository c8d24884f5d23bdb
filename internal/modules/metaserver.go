package modules

import (
	"fmt"
	"net"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/metaserver"

	"github.com/kubeedge-windows/edgecore/config"
)

// metaServerListener is the metaServer's listener (metaserver.Listen,
// the hook of patches/0015) for the node configured by c on goos. The
// metaServer answers only with upstream's authentication and
// authorization (config.MetaServerAuthorized: HTTPS, pods' service-account
// tokens, the cluster's RBAC); the configuration's validation refuses the
// rest at load, and this refuses it again where the port would open. On
// Windows the dummy address, which Linux puts on a dummy interface of its
// own, is not served: Windows has none, and upstream's listen there would
// fail and stop the node's modules. Pods with host networking (HostProcess
// pods) reach metaServer.server.
func metaServerListener(c *v1alpha2.EdgeCoreConfig, goos string, listen func(network, addr string) (net.Listener, error)) func(string) (net.Listener, error) {
	authorized := config.MetaServerAuthorized(c)
	dummy := c.Modules.MetaManager.MetaServer.DummyServer
	return func(addr string) (net.Listener, error) {
		if !authorized {
			return nil, fmt.Errorf("the metaServer does not serve plain HTTP on %s: it would answer every caller without authentication; set featureGates.%s: true", addr, config.RequireAuthorizationGate)
		}
		if host, _, err := net.SplitHostPort(addr); err == nil {
			if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
				return nil, fmt.Errorf("the metaServer does not serve on every interface (%s): give it one address", addr)
			}
		}
		if goos == config.Windows && addr == dummy {
			klog.InfoS("Windows has no dummy interface: the metaServer is served at metaServer.server only", "notServed", addr)
			return nil, nil
		}
		return listen("tcp", addr)
	}
}

// installMetaServerListener puts the hook in place before the metaServer
// starts.
func installMetaServerListener(c *v1alpha2.EdgeCoreConfig, goos string) {
	metaserver.Listen = metaServerListener(c, goos, net.Listen)
}
