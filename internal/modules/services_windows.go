package modules

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	proxyconfigapi "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxyconfig "k8s.io/kubernetes/pkg/proxy/config"
	"k8s.io/kubernetes/pkg/proxy/winkernel"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/servicestore"
)

// The proxier's pace, kube-proxy's defaults: a full sync every 30 s at
// the latest, a change applied within a second, and the informers'
// resync.
const (
	proxySyncPeriod    = 30 * time.Second
	proxyMinSyncPeriod = time.Second
	proxyResync        = 15 * time.Minute
)

// newHcnService is the HNS the proxier programs: the host's, unless a
// test build of the e2e records the calls instead (hns_e2e_windows.go).
var newHcnService func(servicesPlan) winkernel.HcnService

// startProxier runs Kubernetes' Windows kernelspace proxier in this
// process on the pod network of plan, fed by informers over the store:
// ClusterIP and NodePort Services for the node's pods. It returns at
// once; the proxier starts in the background once HNS offers its v2 API
// and holds the network (upstream's NewProxier panics without the one and
// waits for the other without end, which the node must not do in its
// module's start).
func startProxier(ctx context.Context, plan servicesPlan, store *servicestore.Store) error {
	if newHcnService != nil {
		h := newHcnService(plan)
		winkernel.NewHcnService = func() winkernel.HcnService { return h }
	}
	h := winkernel.NewHcnService()
	if !h.GetSupportedFeatures().Api.V2 {
		return errors.New("the Host Networking Service does not offer its v2 API, which the proxier programs load balancers with: " +
			"run Windows Server 2019 or later with the Containers feature (Install-WindowsFeature -Name Containers)")
	}
	go func() {
		name := plan.network.NetworkName()
		for logged := false; ; logged = true {
			if _, err := h.GetNetworkByName(name); err == nil {
				break
			} else if !logged {
				klog.ErrorS(err, "The proxier waits for the pod network's HNS network: check it with `edgecore.exe preflight`", "network", name)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(networkPoll):
			}
		}
		p, err := newProxier(plan)
		if err != nil {
			klog.ErrorS(err, "The Windows kernelspace proxier does not run: ClusterIP and NodePort Services are not served to the node's pods")
			return
		}
		runProxier(ctx, p, store)
		klog.InfoS("The Windows kernelspace proxier serves Services to the node's pods", "network", name,
			"mode", plan.network.Mode, "node", plan.services.NodeName)
	}()
	return nil
}

// networkPoll paces the wait for the pod network's HNS network.
const networkPoll = 10 * time.Second

// newProxier makes the proxier for plan's pod network. On l2bridge and
// nat networks the proxier takes no source VIP (it uses one on overlay
// networks only, which the node does not make): its load balancers are
// over the pods' endpoints, with the host endpoint cni-config made as the
// network's root endpoint. DSR stays off.
func newProxier(plan servicesPlan) (*winkernel.Proxier, error) {
	nodeIP := net.ParseIP(plan.services.NodeIP)
	cfg := proxyconfigapi.KubeProxyWinkernelConfiguration{NetworkName: plan.network.NetworkName()}
	if plan.network.Mode == cni.ModeL2Bridge && plan.network.Endpoint != nil {
		cfg.RootHnsEndpointName = plan.network.Endpoint.Name
	}
	p, err := winkernel.NewProxier(v1.IPv4Protocol, proxySyncPeriod, proxyMinSyncPeriod, plan.services.NodeName, nodeIP,
		eventLog{}, nil, "", cfg)
	if err != nil {
		return nil, fmt.Errorf("on HNS network %q: %w", cfg.NetworkName, err)
	}
	return p, nil
}

// runProxier connects p to informers over the store and runs it.
func runProxier(ctx context.Context, p *winkernel.Proxier, store *servicestore.Store) {
	sel := proxySelector()
	svcInf := cache.NewSharedIndexInformer(store.ListerWatcher(servicestore.KindService, sel, proxyService), &v1.Service{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	sliceInf := cache.NewSharedIndexInformer(store.ListerWatcher(servicestore.KindEndpointSlice, sel, proxyEndpointSlice), &discoveryv1.EndpointSlice{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	svcCfg := proxyconfig.NewServiceConfig(ctx, serviceInformer{svcInf}, proxyResync)
	svcCfg.RegisterEventHandler(p)
	sliceCfg := proxyconfig.NewEndpointSliceConfig(ctx, endpointSliceInformer{sliceInf}, proxyResync)
	sliceCfg.RegisterEventHandler(p)
	go svcCfg.Run(ctx.Done())
	go sliceCfg.Run(ctx.Done())
	go svcInf.Run(ctx.Done())
	go sliceInf.Run(ctx.Done())
	// The proxier's loop has no stop of its own: it ends with the
	// process.
	go p.SyncLoop()
}

// serviceInformer and endpointSliceInformer give the proxier's config
// handlers informers over the store, as client-go's factory would over an
// API server.
type serviceInformer struct{ inf cache.SharedIndexInformer }

func (i serviceInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i serviceInformer) Lister() corelisters.ServiceLister {
	return corelisters.NewServiceLister(i.inf.GetIndexer())
}

type endpointSliceInformer struct{ inf cache.SharedIndexInformer }

func (i endpointSliceInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i endpointSliceInformer) Lister() discoverylisters.EndpointSliceLister {
	return discoverylisters.NewEndpointSliceLister(i.inf.GetIndexer())
}

// eventLog is the proxier's event recorder: the node has no events API
// of its own for it, so what the proxier reports goes to the log.
type eventLog struct{}

func (eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	klog.InfoS("Proxier event", "type", eventtype, "reason", reason, "action", action, "object", fmt.Sprintf("%T", regarding),
		"note", fmt.Sprintf(note, args...))
}
