package preflight

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

const (
	nameServices     = "Services at the node"
	nameServicesDNS  = "Pods' DNS server"
	nameServiceStore = "Services from the cloud"
	nameLoadBalancer = "HNS load balancing"
)

// fixDynamicController is what the cloud needs for the node's store to
// hold Services and EndpointSlices.
const fixDynamicController = "turn on cloudcore's dynamicController (modules.dynamicController.enable: true in cloudcore.yaml, " +
	"or keadm init --set cloudCore.modules.dynamicController.enable=true) and restart cloudcore; the node asks again when it reconnects"

// ServicesProbes gather what the Services rows judge.
type ServicesProbes struct {
	// Stored counts the Services and EndpointSlices the node's database
	// holds (nodedb.Count); an error wrapping nodedb.ErrNotFound means
	// the node has not run yet.
	Stored func(dataSource string) (services, slices int, err error)
	// LoadBalancing reads what the host's HNS offers the proxier.
	LoadBalancing func() (hns.LoadBalancing, error)
}

// SystemServicesProbes read the node's database and the host's HNS.
func SystemServicesProbes() *ServicesProbes {
	return &ServicesProbes{
		Stored: func(dataSource string) (int, int, error) {
			s, err := nodedb.Count(dataSource, "service")
			if err != nil {
				return 0, 0, err
			}
			e, err := nodedb.Count(dataSource, "endpointslice")
			return s, e, err
		},
		LoadBalancing: hns.New().LoadBalancing,
	}
}

// checkServices reports whether Services at the node are on, what they
// run on, and what they need from the host and the cloud.
func checkServices(cfg Config, p Probes) []Row {
	s := cfg.Services
	if s == nil {
		return nil
	}
	if !s.On {
		return []Row{skip(nameServices, fmt.Sprintf("off (featureGates.%s): pods reach no ClusterIP, NodePort or cluster DNS name through this node; "+
			"to turn them on, set featureGates.%s: true in the configuration and restart the service", config.GateServices, config.GateServices))}
	}
	var st podnet.State
	recorded := false
	if p.PodNetwork != nil && p.PodNetwork.State != nil {
		var err error
		if st, recorded, err = p.PodNetwork.State(); err != nil {
			return []Row{couldNotCheck(nameServices, err)}
		}
	}
	host, hasHost := st.HostAddress()
	switch {
	case !recorded || st.NetworkName() == "":
		return []Row{fail(nameServices, "on, but no pod network is recorded: the node serves Services on the pod network cni-config or join wrote",
			"run edgecore.exe cni-config (or set featureGates."+config.GateServices+": false)")}
	case !hasHost:
		return []Row{fail(nameServices, "on, but the pod network's record does not say the host's address on it (written by an earlier release)",
			"run edgecore.exe cni-config again with the same flags")}
	}
	rows := []Row{pass(nameServices, fmt.Sprintf("on: the kernelspace proxier programs HNS network %q (%s, source VIP %s); the DNS responder answers %s at %s:53",
		st.NetworkName(), st.Mode, host, s.ClusterDomain, host))}
	var conf []byte
	if st.CNIConfFile != "" && p.ReadFile != nil {
		// Unreadable, the CNI row says why; the kubelet's setting is judged.
		conf, _ = p.ReadFile(st.CNIConfFile)
	}
	rows = append(rows, checkPodsDNS(s, host, st.CNIConfFile, conf))
	rows = append(rows, checkServiceStore(cfg, p))
	rows = append(rows, checkLoadBalancing(p))
	return rows
}

// checkPodsDNS: the pods resolve through the node's responder only when
// they are given it: by the CNI configuration conf (at confPath; nil when
// unread) through its dns.nameservers, or by the kubelet (clusterDNS)
// when the configuration relays the runtime's DNS settings
// (capabilities.dns), which containerd needs to pass them to the plugin.
func checkPodsDNS(s *config.Services, host netip.Addr, confPath string, conf []byte) Row {
	if conf != nil {
		if servers, relays, err := cni.PodDNS(conf); err == nil && !relays {
			for _, d := range servers {
				if a, err := netip.ParseAddr(strings.TrimSpace(d)); err == nil && a == host {
					return pass(nameServicesDNS, fmt.Sprintf("%s gives pods the node's DNS responder, %s, which answers while the cloud is away", confPath, host))
				}
			}
			return warn(nameServicesDNS, fmt.Sprintf("%s gives pods the DNS servers %s, not the node's DNS responder (%s), and does not relay clusterDNS: "+
				"pods lose the cluster's names whenever those are out of reach", confPath, strings.Join(servers, ", "), host),
				fmt.Sprintf("write the pod network again with --dns %s (edgecore.exe cni-config with its flags and --force), then restart containerd", host))
		}
	}
	if len(s.ClusterDNS) == 0 {
		return pass(nameServicesDNS, fmt.Sprintf("clusterDNS is empty: the node gives pods its DNS responder, %s", host))
	}
	for _, d := range s.ClusterDNS {
		if a, err := netip.ParseAddr(strings.TrimSpace(d)); err == nil && a == host {
			return pass(nameServicesDNS, fmt.Sprintf("clusterDNS %s: the node's DNS responder, which answers while the cloud is away", strings.Join(s.ClusterDNS, ", ")))
		}
	}
	return warn(nameServicesDNS, fmt.Sprintf("clusterDNS %s is not the node's DNS responder (%s): pods lose the cluster's names whenever that server is out of reach",
		strings.Join(s.ClusterDNS, ", "), host),
		fmt.Sprintf("set modules.edged.tailoredKubeletConfig.clusterDNS to [%s] and restart the service", host))
}

// checkServiceStore: every cluster has the Service default/kubernetes, so
// a node that has run and holds none is not sent any.
func checkServiceStore(cfg Config, p Probes) Row {
	if p.Services == nil || p.Services.Stored == nil {
		return notProbed(nameServiceStore)
	}
	if cfg.DataSource == "" {
		return skip(nameServiceStore, "no database is configured")
	}
	svcs, slices, err := p.Services.Stored(cfg.DataSource)
	switch {
	case errors.Is(err, nodedb.ErrNotFound):
		return skip(nameServiceStore, "the node has not run yet: its store fills once it connects to cloudcore")
	case err != nil:
		return couldNotCheck(nameServiceStore, err)
	case svcs == 0:
		return warn(nameServiceStore, "the node's store holds no Service (every cluster has default/kubernetes): cloudcore sends none to this node", fixDynamicController)
	}
	return pass(nameServiceStore, fmt.Sprintf("the node keeps %d Services and %d EndpointSlices, which it serves while the cloud is away", svcs, slices))
}

// checkLoadBalancing: the proxier needs HNS's v2 API; session affinity
// needs its support too.
func checkLoadBalancing(p Probes) Row {
	if p.Services == nil || p.Services.LoadBalancing == nil {
		return notProbed(nameLoadBalancer)
	}
	lb, err := p.Services.LoadBalancing()
	if err != nil {
		return couldNotCheck(nameLoadBalancer, err)
	}
	if !lb.APIV2 {
		return fail(nameLoadBalancer, "HNS does not offer its v2 API, which the kernelspace proxier programs load balancers with",
			"run Windows Server 2019 or later with the Containers feature (Install-WindowsFeature -Name Containers)")
	}
	if !lb.SessionAffinity {
		return warn(nameLoadBalancer, "HNS v2 load balancers, without session affinity: Services with sessionAffinity ClientIP are balanced per connection",
			"update Windows (session affinity came with Windows Server 2019 updates)")
	}
	return pass(nameLoadBalancer, "HNS v2 load balancers with session affinity")
}
