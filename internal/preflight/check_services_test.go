package preflight

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// servicesProbes is a node whose pod network is recorded by st (nil: none)
// and whose database and HNS answer as given.
func servicesProbes(st *podnet.State, stored func(string) (int, int, error), lb hns.LoadBalancing, lbErr error) Probes {
	return Probes{
		PodNetwork: &PodNetworkProbes{State: func() (podnet.State, bool, error) {
			if st == nil {
				return podnet.State{}, false, nil
			}
			return *st, true, nil
		}},
		Services: &ServicesProbes{Stored: stored, LoadBalancing: func() (hns.LoadBalancing, error) { return lb, lbErr }},
	}
}

func rowsText(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s | %s | %s | %s\n", r.Status, r.Name, r.Detail, r.Fix)
	}
	return b.String()
}

func TestServicesRows(t *testing.T) {
	l2 := &podnet.State{Mode: "l2bridge", Subnet: "10.244.7.0/24", HostIP: "10.244.7.2", Network: &podnet.Object{Name: "cbr0"}}
	healthyLB := hns.LoadBalancing{APIV2: true, SessionAffinity: true, ModifyLoadBalancer: true}
	stored := func(n int) func(string) (int, int, error) {
		return func(string) (int, int, error) { return n, 2 * n, nil }
	}
	on := func(dns ...string) Config {
		return Config{Services: &config.Services{On: true, ClusterDomain: "cluster.local", ClusterDNS: dns}, DataSource: `C:\var\lib\kubeedge\edgecore.db`}
	}
	for name, tc := range map[string]struct {
		cfg   Config
		p     Probes
		wants []string
	}{
		"off": {Config{Services: &config.Services{}}, servicesProbes(nil, nil, hns.LoadBalancing{}, nil),
			[]string{"SKIP | Services at the node | off (featureGates.edgeServices)", "set featureGates.edgeServices: true"}},
		"on and healthy": {on("10.244.7.2"), servicesProbes(l2, stored(12), healthyLB, nil), []string{
			`PASS | Services at the node | on: the kernelspace proxier programs HNS network "cbr0" (l2bridge, source VIP 10.244.7.2); the DNS responder answers cluster.local at 10.244.7.2:53`,
			"PASS | Pods' DNS server | clusterDNS 10.244.7.2: the node's DNS responder",
			"PASS | Services from the cloud | the node keeps 12 Services and 24 EndpointSlices",
			"PASS | HNS load balancing | HNS v2 load balancers with session affinity"}},
		"no record": {on(), servicesProbes(nil, stored(1), healthyLB, nil),
			[]string{"FAIL | Services at the node | on, but no pod network is recorded", "run edgecore.exe cni-config"}},
		"an old nat record": {on(), servicesProbes(&podnet.State{Mode: "nat"}, stored(1), healthyLB, nil),
			[]string{"FAIL | Services at the node | on, but the pod network's record does not say the host's address"}},
		"the cloud's DNS and no dynamicController": {on("10.96.0.10"), servicesProbes(l2, stored(0), healthyLB, nil), []string{
			"WARN | Pods' DNS server | clusterDNS 10.96.0.10 is not the node's DNS responder (10.244.7.2)", "set modules.edged.tailoredKubeletConfig.clusterDNS to [10.244.7.2]",
			"WARN | Services from the cloud | the node's store holds no Service", "modules.dynamicController.enable: true"}},
		"not run yet, no HNS": {on(), servicesProbes(l2, func(string) (int, int, error) { return 0, 0, fmt.Errorf("%w: absent", nodedb.ErrNotFound) },
			hns.LoadBalancing{}, hns.ErrNotWindows), []string{
			"PASS | Pods' DNS server | clusterDNS is empty: the node gives pods its DNS responder, 10.244.7.2",
			"SKIP | Services from the cloud | the node has not run yet",
			"WARN | HNS load balancing | could not check: the Host Networking Service (HNS) exists on Windows only"}},
		"an old Windows": {on(), servicesProbes(l2, stored(1), hns.LoadBalancing{}, nil),
			[]string{"FAIL | HNS load balancing | HNS does not offer its v2 API", "Windows Server 2019 or later"}},
		"no affinity": {on(), servicesProbes(l2, stored(1), hns.LoadBalancing{APIV2: true}, nil),
			[]string{"WARN | HNS load balancing | HNS v2 load balancers, without session affinity"}},
		"a database that cannot be read": {on(), servicesProbes(l2, func(string) (int, int, error) { return 0, 0, errors.New("locked") }, healthyLB, nil),
			[]string{"WARN | Services from the cloud | could not check: locked"}},
		"the CNI configuration gives the responder": {on(), withConf(l2, `{"name":"cbr0","type":"win-bridge","dns":{"nameservers":["10.244.7.2"]}}`, servicesProbes(l2, stored(1), healthyLB, nil)),
			[]string{`PASS | Pods' DNS server | C:\Program Files\containerd\cni\conf\l2bridge.conf gives pods the node's DNS responder, 10.244.7.2`}},
		// The quick start's trap: clusterDNS is the responder, but a
		// Windows pod gets the configuration's servers.
		"the CNI configuration gives the cloud's DNS": {on("10.244.7.2"), withConf(l2, `{"cniVersion":"0.2.0","name":"cbr0","plugins":[{"type":"win-bridge","dns":{"nameservers":["10.96.0.10"]},"capabilities":{"portMappings":true}}]}`, servicesProbes(l2, stored(1), healthyLB, nil)),
			[]string{"WARN | Pods' DNS server | " + `C:\Program Files\containerd\cni\conf\l2bridge.conf gives pods the DNS servers 10.96.0.10, not the node's DNS responder (10.244.7.2)`,
				"--dns 10.244.7.2"}},
		"the CNI configuration relays clusterDNS": {on("10.96.0.10"), withConf(l2, `{"name":"cbr0","type":"win-bridge","capabilities":{"dns":true}}`, servicesProbes(l2, stored(1), healthyLB, nil)),
			[]string{"WARN | Pods' DNS server | clusterDNS 10.96.0.10 is not the node's DNS responder (10.244.7.2)"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := rowsText(checkServices(tc.cfg, tc.p))
			for _, w := range tc.wants {
				if !strings.Contains(got, w) {
					t.Errorf("rows lack %q:\n%s", w, got)
				}
			}
		})
	}
	// Before join there is no configuration, and no Services rows.
	if rows := checkServices(Config{}, Probes{}); len(rows) != 0 {
		t.Errorf("rows without a configuration: %v", rows)
	}
}

// withConf gives p the CNI configuration conf at the path st records.
func withConf(st *podnet.State, conf string, p Probes) Probes {
	c := *st
	c.CNIConfFile = `C:\Program Files\containerd\cni\conf\l2bridge.conf`
	p.PodNetwork = &PodNetworkProbes{State: func() (podnet.State, bool, error) { return c, true, nil }}
	p.ReadFile = func(path string) ([]byte, error) {
		if path != c.CNIConfFile {
			return nil, fmt.Errorf("open %s: not found", path)
		}
		return []byte(conf), nil
	}
	return p
}
