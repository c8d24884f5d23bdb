package config

import (
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// GateServices is the one switch of Services at the node: the Windows
// kernelspace proxier fed from the node's own store of Services and
// EndpointSlices (ClusterIP and NodePort for the node's pods), and the
// node's DNS responder for the cluster's names. It lives in the
// configuration's featureGates, where `--set featureGates.edgeServices=true`
// and a ConfigUpdateJob reach it like any other key; this loader owns it:
// KubeEdge's feature gate never sees it (UpstreamFeatureGates). Join turns
// it on when it writes the pod network; a node upgraded or taken over
// keeps it off until the operator turns it on.
const GateServices = "edgeServices"

// ourGates are the featureGates keys this loader owns.
var ourGates = map[string]bool{GateServices: true}

// DefaultClusterDomain is the cluster domain when the kubelet's
// configuration names none: Kubernetes' default.
const DefaultClusterDomain = "cluster.local"

// fieldFeatureGates is where the switch is.
var fieldFeatureGates = field.NewPath("featureGates")

// Services is what the switch turns on, as c configures it.
type Services struct {
	// On is the switch.
	On bool
	// ClusterDomain is the zone the DNS responder answers
	// (tailoredKubeletConfig.clusterDomain, else cluster.local).
	ClusterDomain string
	// ClusterDNS are the DNS servers the kubelet gives pods.
	ClusterDNS []string
	// NodeName is the node's name: the proxier's host name, which tells
	// this node's endpoints from its peers'.
	NodeName string
	// NodeIP is edged's node IP, the proxier's node address.
	NodeIP string
}

// ServicesOf reads the switch and what the node's Services need from c.
func ServicesOf(c *v1alpha2.EdgeCoreConfig) Services {
	s := Services{On: c.FeatureGates[GateServices], ClusterDomain: DefaultClusterDomain}
	if m := c.Modules; m != nil && m.Edged != nil {
		s.NodeName, s.NodeIP = m.Edged.HostnameOverride, m.Edged.NodeIP
		if k := m.Edged.TailoredKubeletConfig; k != nil {
			if d := strings.TrimSpace(k.ClusterDomain); d != "" {
				s.ClusterDomain = strings.TrimSuffix(d, ".")
			}
			s.ClusterDNS = append([]string(nil), k.ClusterDNS...)
		}
	}
	return s
}

// SetServices turns the switch on or off in c. Turned on with a known
// address of the DNS responder (the pod network's host address), the
// kubelet gives pods that address as their DNS server and the cluster
// domain its default, unless c names them already.
func SetServices(c *v1alpha2.EdgeCoreConfig, on bool, dns netip.Addr) {
	if c.FeatureGates == nil {
		c.FeatureGates = map[string]bool{}
	}
	c.FeatureGates[GateServices] = on
	if !on || c.Modules == nil || c.Modules.Edged == nil || c.Modules.Edged.TailoredKubeletConfig == nil {
		return
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	if dns.IsValid() && len(k.ClusterDNS) == 0 {
		k.ClusterDNS = []string{dns.String()}
	}
	if strings.TrimSpace(k.ClusterDomain) == "" {
		k.ClusterDomain = DefaultClusterDomain
	}
}

// UpstreamFeatureGates is gates without the keys this loader owns: what
// KubeEdge's feature gate is given (it refuses names it does not know).
func UpstreamFeatureGates(gates map[string]bool) map[string]bool {
	out := make(map[string]bool, len(gates))
	for k, v := range gates {
		if !ourGates[k] {
			out[k] = v
		}
	}
	return out
}

// validateServices refuses a configuration under which the switch cannot
// work: the store is metamanager's and fills from the cloud through
// edgeHub, and the proxier needs the node's name.
func validateServices(c *v1alpha2.EdgeCoreConfig) field.ErrorList {
	var errs field.ErrorList
	for k := range c.FeatureGates {
		if strings.EqualFold(k, GateServices) && k != GateServices {
			errs = append(errs, field.Invalid(fieldFeatureGates.Key(k), c.FeatureGates[k],
				fmt.Sprintf("write the switch of Services at the node as %s (the name is case-sensitive)", GateServices)))
		}
	}
	if !c.FeatureGates[GateServices] {
		return errs
	}
	m := c.Modules
	need := func(ok bool, path *field.Path, why string) {
		if !ok {
			errs = append(errs, field.Invalid(fieldFeatureGates.Key(GateServices), true,
				fmt.Sprintf("%s must be enabled: %s; fix: enable it, or set %s to false", path, why, fieldFeatureGates.Key(GateServices))))
		}
	}
	need(m.MetaManager.Enable, field.NewPath("modules", "metaManager", "enable"), "the node's Services and EndpointSlices are kept by metamanager")
	need(m.EdgeHub.Enable, field.NewPath("modules", "edgeHub", "enable"), "the node asks the cloud for Services and EndpointSlices through edgeHub")
	need(m.Edged.Enable, field.NewPath("modules", "edged", "enable"), "Services serve the node's pods")
	return errs
}
