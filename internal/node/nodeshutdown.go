package node

import (
	"fmt"
	"os"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// statusSettle is how long the node keeps running after the kubelet has
// stopped the pods at a host shutdown, so that the last pod's final
// status, which the kubelet's status manager sends on its own goroutine
// as the pod ends, leaves through metamanager and edgehub before the
// modules stop. Seen in the e2e: stopping at once dropped the last pod's
// status ("send sync message default/pod/critical failed ... bad request
// module name(metamanager)"). It is part of service.NodeShutdownSlack.
const statusSettle = 2 * time.Second

// hostShutdown is what the service runs at a host shutdown (see
// service.SetNodeShutdown) for the kubelet's node shutdown manager, whose
// ProcessShutdownEvent is process: it terminates the pods in priority
// order with their grace periods and preStop hooks, having reported the
// node as shutting down, and returns when they are gone or ns.Grace has
// passed. Then it waits statusSettle (through sleep) for the pods' last
// statuses to leave. The log says when it began, how long it took, and
// why.
func hostShutdown(process func() error, ns config.NodeShutdown, now func() time.Time, sleep func(time.Duration)) service.NodeShutdown {
	return service.NodeShutdown{Grace: ns.Grace, Run: func() error {
		klog.InfoS("Host shutdown: stopping the node's pods by priority before edgecore stops", "gracePeriods", ns.Grace, "from", ns.Field)
		begin := now()
		err := process()
		if err != nil {
			klog.ErrorS(err, "Host shutdown: stopping the node's pods failed", "took", now().Sub(begin))
		} else {
			klog.InfoS("Host shutdown: the node's pods are stopped", "took", now().Sub(begin))
		}
		sleep(statusSettle)
		klog.Flush()
		return err
	}}
}

// tolerantPrepare is the kubelet's preparation of the service for a host
// shutdown (upstream's nodeshutdown.PrepareService: its place before
// containerd in Windows' pre-shutdown order, its time-out raised to the
// grace periods) with a failure passed to warn instead of returned: a
// failure there would keep the manager from registering at all, and the
// pods are better stopped by priority, even if containerd may then be
// told of the shutdown at the same time, than not at all. The time-out is
// edgecore's to set (join, `service install`) and to check
// (checkPreShutdown). Under Wine it always fails: Wine has no
// PreshutdownOrder value and no delayed-start query, which upstream asks
// the service manager for.
func tolerantPrepare[L any](upstream func(L, string, time.Duration) error, warn func(error)) func(L, string, time.Duration) error {
	return func(logger L, name string, periodRequested time.Duration) error {
		if err := upstream(logger, name, periodRequested); err != nil {
			warn(err)
		}
		return nil
	}
}

// checkPreShutdown refuses to run the node as a service when Windows waits
// less for the service at a host shutdown than ns needs (a configuration
// whose grace periods grew after the service was installed). query is
// service.Query; when it cannot tell, the node runs and the reason is
// logged: preflight says the same.
func checkPreShutdown(configFile string, ns config.NodeShutdown, query func(name string) (service.Status, error)) error {
	st, err := query(service.DefaultName)
	if err != nil || !st.Installed || st.PreShutdownTimeout == 0 {
		klog.InfoS("Cannot tell how long a host shutdown waits for the service; `edgecore.exe preflight` checks it",
			"service", service.DefaultName, "err", err)
		return nil
	}
	if err := service.CheckPreShutdown(service.DefaultName, st.PreShutdownTimeout, ns.Grace, ns.Field); err != nil {
		return fmt.Errorf("config file %s: %w", configFile, err)
	}
	return nil
}

// servePreShutdownRequests creates the event through which an
// administrator rehearses a host shutdown on this service
// (service.PreShutdownEventName) and returns the requests for
// RunAsService, and the function that closes the event. Each request is
// logged. Without the event the service runs without rehearsals.
func servePreShutdownRequests() (<-chan struct{}, func()) {
	pid := uint32(os.Getpid())
	name := service.PreShutdownEventName(pid)
	requests, closeRequests, err := service.PreShutdownRequests(pid)
	if err != nil {
		klog.ErrorS(err, "Rehearsals of a host shutdown are off", "event", name)
		return nil, func() {}
	}
	klog.InfoS("Signal the event to rehearse a host shutdown: the node's pods are stopped as at a shutdown, then the service stops", "event", name)
	out := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		for range requests {
			klog.InfoS("An administrator signalled the pre-shutdown event: going through a host shutdown", "event", name)
			select {
			case out <- struct{}{}:
			case <-quit:
			}
		}
	}()
	return out, func() {
		close(quit)
		closeRequests()
	}
}
