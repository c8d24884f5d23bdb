package config

import (
	"strings"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// authorizedMetaServer turns the metaServer on as the node takes it: with
// upstream's authentication and authorization.
func authorizedMetaServer(c *v1alpha2.EdgeCoreConfig) {
	c.Modules.MetaManager.MetaServer.Enable = true
	if c.FeatureGates == nil {
		c.FeatureGates = map[string]bool{}
	}
	c.FeatureGates[RequireAuthorizationGate] = true
	c.Modules.MetaManager.MetaServer.ServiceAccountIssuers = []string{"https://kubernetes.default.svc.cluster.local"}
}

// No node API answers without authentication: a metaServer is refused in
// plain HTTP on any address, and on an unspecified address always; with
// requireAuthorization and the cluster's issuer it passes, on loopback or
// on one of the host's addresses.
func TestMetaServerServesOnlyWithAuthentication(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *v1alpha2.EdgeCoreConfig)
		want []string // nil: passes
	}{
		{"plain HTTP on loopback", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.MetaManager.MetaServer.Enable = true },
			[]string{"modules.metaManager.metaServer.enable", "plain HTTP", "without authentication", "featureGates.requireAuthorization: true"}},
		{"plain HTTP on every interface", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.MetaManager.MetaServer.Enable = true
			c.Modules.MetaManager.MetaServer.Server = "0.0.0.0:10550"
		}, []string{"plain HTTP", "metaServer.server", "0.0.0.0:10550", "every interface"}},
		{"authorized on 0.0.0.0", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.Server = "0.0.0.0:10550"
		}, []string{"metaServer.server", "0.0.0.0:10550", "every interface", "fix:"}},
		{"authorized on ::", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.Server = "[::]:10550"
		}, []string{"metaServer.server", "[::]:10550", "every interface"}},
		{"authorized with no host", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.DummyServer = ":10550"
		}, []string{"metaServer.dummyServer"}},
		{"authorized without an issuer", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.ServiceAccountIssuers = nil
		}, []string{"metaServer.serviceAccountIssuers", "--service-account-issuer"}},
		{"authorized on loopback", authorizedMetaServer, nil},
		{"authorized on the host's address", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.Server = "192.168.1.20:10550"
		}, nil},
		{"off", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.MetaManager.MetaServer.Server = "0.0.0.0:10550" }, nil},
	} {
		for _, goos := range []string{Windows, Linux} {
			c, err := Sample(KindDefault, testHost(goos))
			if err != nil {
				t.Fatal(err)
			}
			tc.set(c)
			Normalize(c, goos)
			errs := validateAll(c, goos)
			got := errs.ToAggregate()
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("%s (%s): refused: %v", tc.name, goos, got)
			case tc.want != nil && got == nil:
				t.Errorf("%s (%s): accepted", tc.name, goos)
			case tc.want != nil:
				for _, w := range tc.want {
					if !strings.Contains(got.Error(), w) {
						t.Errorf("%s (%s): %q lacks %q", tc.name, goos, got, w)
					}
				}
			}
		}
	}
}
