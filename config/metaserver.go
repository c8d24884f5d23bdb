package config

import (
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// RequireAuthorizationGate is the feature gate (featureGates in the
// configuration) under which upstream's metaServer serves HTTPS with a
// serving certificate the cluster signs, authenticates each request by
// its bearer token (a pod's service-account token, checked against the
// issuers and keys the configuration names) and authorizes it with the
// cluster's RBAC, as the API server would. Without it the metaServer
// serves plain HTTP and answers everyone.
const RequireAuthorizationGate = "requireAuthorization"

// MetaServerAuthorized reports whether the metaServer of c, when on,
// serves HTTPS with upstream's authentication and authorization.
func MetaServerAuthorized(c *v1alpha2.EdgeCoreConfig) bool {
	return c.FeatureGates[RequireAuthorizationGate]
}

// validateMetaServer refuses a metaServer that would answer without
// authentication. Upstream's plain-HTTP metaServer answers every request:
// exec into any pod, the node's cached Secrets and ConfigMaps, pod
// restarts; on 127.0.0.1 every local account reaches it (past the
// administrators-only kubelet pipe), on 0.0.0.0 every host of the plant
// network. So it runs only with requireAuthorization, and never on an
// unspecified address, whose listener answers on every interface.
func validateMetaServer(c *v1alpha2.EdgeCoreConfig) field.ErrorList {
	mm := c.Modules.MetaManager
	if mm == nil || !mm.Enable || mm.MetaServer == nil || !mm.MetaServer.Enable {
		return nil
	}
	s := mm.MetaServer
	p := field.NewPath("modules", "metaManager", "metaServer")
	var errs field.ErrorList
	if !MetaServerAuthorized(c) {
		errs = append(errs, field.Invalid(p.Child("enable"), true,
			"the metaServer would serve plain HTTP on "+s.Server+" and answer every caller without authentication "+
				"(exec into pods, the node's cached Secrets): every local account, or with a non-loopback address every host of the network; "+
				"fix: set featureGates."+RequireAuthorizationGate+": true, under which it serves HTTPS and authorizes each request by the pod's "+
				"service-account token and the cluster's RBAC (see docs/configuration.md), or set enable: false"))
	}
	for _, f := range []struct{ name, addr string }{{"server", s.Server}, {"dummyServer", s.DummyServer}} {
		host, _, err := net.SplitHostPort(f.addr)
		if err != nil {
			continue // validateNetwork names a value that is not host:port
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			errs = append(errs, field.Invalid(p.Child(f.name), f.addr,
				"an unspecified address serves the metaServer on every interface of the host; fix: give one address, such as 127.0.0.1:10550 for pods with host networking, or this host's address on the pods' network"))
		}
	}
	if MetaServerAuthorized(c) && len(s.ServiceAccountIssuers) == 0 {
		errs = append(errs, field.Required(p.Child("serviceAccountIssuers"),
			fmt.Sprintf("with %s the metaServer accepts only service-account tokens of the issuers named here, and without one it refuses every request but discovery; "+
				"fix: name the cluster's issuer (kube-apiserver --service-account-issuer), such as [https://kubernetes.default.svc.cluster.local]", RequireAuthorizationGate)))
	}
	return errs
}
