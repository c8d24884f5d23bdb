package config

import (
	"net/netip"
	"strings"
	"testing"
)

func TestServicesSwitchLoadsAndStaysOurs(t *testing.T) {
	p := writeFile(t, "edgecore.yaml", []byte("apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\n"+
		"featureGates:\n  edgeServices: true\n  moduleRestart: true\n"+
		"modules:\n  edged:\n    hostnameOverride: line3-pc\n    nodeIP: 10.20.30.40\n    tailoredKubeletConfig:\n      clusterDomain: plant.local.\n      clusterDNS: [10.244.7.2]\n"))
	c, _, err := Load(p, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	s := ServicesOf(c)
	if !s.On || s.ClusterDomain != "plant.local" || s.NodeName != "line3-pc" || s.NodeIP != "10.20.30.40" || strings.Join(s.ClusterDNS, ",") != "10.244.7.2" {
		t.Fatalf("ServicesOf = %+v", s)
	}
	up := UpstreamFeatureGates(c.FeatureGates)
	if _, ok := up[GateServices]; ok || !up["moduleRestart"] {
		t.Fatalf("KubeEdge's gates: %v", up)
	}
	if c.FeatureGates[GateServices] != true {
		t.Fatal("UpstreamFeatureGates changed the configuration's own map")
	}
}

func TestServicesOffByDefault(t *testing.T) {
	for _, kind := range []string{KindDefault, KindMinimal} {
		c, err := Sample(kind, testHost(Windows))
		if err != nil {
			t.Fatal(err)
		}
		if s := ServicesOf(c); s.On || s.ClusterDomain != DefaultClusterDomain {
			t.Errorf("%v sample: %+v", kind, s)
		}
	}
}

func TestServicesSwitchNeedsItsModules(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	SetServices(c, true, netip.Addr{})
	c.Modules.MetaManager.Enable = false
	errs := validateServices(c)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "modules.metaManager.enable") || !strings.Contains(errs[0].Error(), "featureGates[edgeServices]") {
		t.Fatalf("errors %v", errs)
	}
	c.Modules.MetaManager.Enable = true
	c.FeatureGates["EdgeServices"] = true
	if errs := validateServices(c); len(errs) != 1 || !strings.Contains(errs[0].Error(), "case-sensitive") {
		t.Fatalf("misspelt switch: %v", errs)
	}
}

func TestSetServicesWritesThePodsDNSServerOnce(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	k.ClusterDomain = ""
	SetServices(c, true, netip.MustParseAddr("10.244.7.2"))
	if !ServicesOf(c).On || strings.Join(k.ClusterDNS, ",") != "10.244.7.2" || k.ClusterDomain != DefaultClusterDomain {
		t.Fatalf("on: gates %v, clusterDNS %v, domain %q", c.FeatureGates, k.ClusterDNS, k.ClusterDomain)
	}
	// An operator's own DNS server (--set) is kept.
	k.ClusterDNS = []string{"10.96.0.10"}
	SetServices(c, true, netip.MustParseAddr("10.244.7.2"))
	if strings.Join(k.ClusterDNS, ",") != "10.96.0.10" {
		t.Fatalf("clusterDNS replaced: %v", k.ClusterDNS)
	}
	SetServices(c, false, netip.Addr{})
	if ServicesOf(c).On {
		t.Fatal("still on")
	}
}
