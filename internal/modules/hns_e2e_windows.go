//go:build windows && e2ehns

package modules

import (
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/proxy/winkernel"

	"github.com/kubeedge-windows/edgecore/test/hnsrec"
)

// The test build of the end-to-end scenario (build tag e2ehns, never the
// release): Wine has no Host Networking Service, so the proxier programs
// a recording one, made from the pod network's record, that logs each
// change it is asked for; the scenario reads the node's log.
func init() {
	newHcnService = func(p servicesPlan) winkernel.HcnService {
		name := p.network.NetworkName()
		h := hnsrec.New(hnsrec.L2Bridge(name, p.podRange.String(), p.hostIP.String()))
		if e := p.network.Endpoint; e != nil {
			h.AddLocalEndpoint(name, e.Name, p.hostIP.String())
		}
		h.Log = func(call string) { klog.InfoS("Recording HNS (e2e build)", "call", call) }
		klog.InfoS("The proxier programs a recording HNS: this is the e2e test build, not a release", "network", name)
		return h
	}
}
