//go:build windows

package node

import (
	"time"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/nodeshutdown"
	k8sservice "k8s.io/kubernetes/pkg/windows/service"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// upstreamPrepareService is the kubelet's own preparation of the service,
// taken before installNodeShutdown replaces it.
var upstreamPrepareService = nodeshutdown.PrepareService

// installNodeShutdown makes the kubelet's Windows node shutdown manager
// serve edgecore's service (the hooks of patches/0013): it prepares the
// service "edgecore", starts when the process runs as that service, and
// registers with edgecore's control handler, which runs it at a host
// shutdown before the node stops. The manager starts only with the
// feature gate and a grace period (ns); the kubelet starts it once the
// runtime is up.
func installNodeShutdown(ns config.NodeShutdown) {
	nodeshutdown.ServiceName = service.DefaultName
	nodeshutdown.IsServiceInitialized = service.Serving
	nodeshutdown.PrepareService = tolerantPrepare(upstreamPrepareService, func(err error) {
		klog.InfoS("The service's place before its dependencies in Windows' pre-shutdown order was not set; "+
			"the pods are still stopped at a host shutdown", "service", service.DefaultName, "reason", err)
	})
	nodeshutdown.SetPreShutdownHandler = func(h k8sservice.PreshutdownHandler) {
		service.SetNodeShutdown(hostShutdown(h.ProcessShutdownEvent, ns, time.Now, time.Sleep))
		klog.InfoS("Graceful node shutdown is on: at a host shutdown the node's pods are stopped by priority before edgecore stops",
			"gracePeriods", ns.Grace, "from", ns.Field)
	}
}
