//go:build e2e && benchnode

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The cluster Services at the node are measured with: 100 Services of
// one port, each with an EndpointSlice of 5 endpoints on another node
// (500 endpoints), the size of BenchmarkResponderUDP's.
const (
	benchServiceCount = 100
	benchEndpointsPer = 5
)

// svcSample holds the figures of one run of the Services part.
type svcSample struct {
	ready time.Duration // start of the process to node Ready
	// settled is Ready to every Service answered by the node's DNS
	// responder and programmed as a load balancer (Services on only).
	settled         time.Duration
	hwm, rss, files float64 // MiB: peak, at the end of the window, of it from files
	cpu             float64 // CPU seconds in the window
	cpuTotal        float64 // CPU seconds from the start to the end of the window
}

// benchServices measures the Windows node (under Wine) with Services at
// the node off and on, alternately runs times each, with the cluster's
// 100 Services and 500 endpoints in the cloud, and renders the medians.
// The node is the e2e build, edgecore-hnsrec.exe, in both: Wine has no
// HNS, so the proxier programs the recording one (which logs each call),
// and off differs from on only by the switch. The window starts at Ready
// with Services off, and once every Service is answered and programmed
// with them on: it measures the node at rest with its Services.
func benchServices(t *testing.T, c *cluster, runs int, window time.Duration) string {
	exe := mustEnv(t, "EDGECORE_HNSREC_EXE")
	vips := createBenchServices(t, c)
	samples := map[bool][]svcSample{}
	for i := 1; i <= runs; i++ {
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("services/%s/%d", onOff(on), i), func(t *testing.T) {
				samples[on] = append(samples[on], benchServicesRun(t, c, exe, on, vips, i, window))
			})
		}
	}
	return servicesTable(samples, runs, window)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// createBenchServices creates the Services and their EndpointSlices in
// the cloud and returns the ClusterIP of each, by name.
func createBenchServices(t *testing.T, c *cluster) map[string]string {
	t.Helper()
	ctx := context.Background()
	vips := map[string]string{}
	for i := 0; i < benchServiceCount; i++ {
		name := fmt.Sprintf("svc-%d", i)
		svc, err := c.client.CoreV1().Services("default").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
		}, metav1.CreateOptions{})
		if err != nil {
			fatal(t, err)
		}
		vips[name] = svc.Spec.ClusterIP
		s := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		for _, ip := range benchEndpoints(i) {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: ptr.To("peer-node"),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true)}})
		}
		if _, err := c.client.DiscoveryV1().EndpointSlices("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			fatal(t, err)
		}
	}
	t.Logf("%d Services with %d endpoints each created in the cloud", benchServiceCount, benchEndpointsPer)
	return vips
}

// benchEndpoints are the pod addresses behind Service i.
func benchEndpoints(i int) []string {
	var ips []string
	for j := 0; j < benchEndpointsPer; j++ {
		ips = append(ips, fmt.Sprintf("10.244.%d.%d", 100+i, j+10))
	}
	return ips
}

// benchServicesRun starts one Windows node with Services on or off and
// measures it.
func benchServicesRun(t *testing.T, c *cluster, exe string, on bool, vips map[string]string, i int, window time.Duration) svcSample {
	name := fmt.Sprintf("bench-services-%s-%d", onOff(on), i)
	e := newNamedEdge(t, c, "windows", name)
	relaxDiskEviction(t, e)
	e.bin = exe
	// The same pod network record either way: only the switch differs.
	writePodNetworkRecord(t, e)
	setServices(t, e, on)

	ctx, cancel := context.WithTimeout(context.Background(), readyBound)
	defer cancel()
	t.Cleanup(func() { keepLog(t, e.edgecore, name) })
	ready := c.watchReady(ctx, t, name)
	begin := time.Now()
	e.startEdgecore(t)
	pid := e.edgecore.cmd.Process.Pid
	var s svcSample
	select {
	case at := <-ready:
		s.ready = at.Sub(begin)
	case <-ctx.Done():
		fatalf(t, "node %s not Ready within %v: %s", name, readyBound, lastError(e.edgecore.log))
	}
	settledAt := time.Now()
	if on {
		s.settled = eventually(t, podBound, fmt.Sprintf("the %d Services answered and programmed", len(vips)), func() (bool, error) {
			return servicesSettled(e, vips)
		})
		settledAt = time.Now()
	}
	cpu0 := cpuSeconds(pid)
	time.Sleep(time.Until(settledAt.Add(window)))
	if e.edgecore.exited() {
		fatalf(t, "%s ended during the measurement window", name)
	}
	s.cpuTotal = cpuSeconds(pid)
	s.cpu = s.cpuTotal - cpu0
	s.hwm, s.rss, s.files = memory(pid)
	t.Logf("%s (process %d, %s): Ready %s after start; Services settled %s after Ready; after %v: peak RSS %.1f MiB, RSS %.1f MiB (%.1f MiB from files), CPU %.2f s (%.2f s since start)",
		name, pid, processName(pid), fmtDur(s.ready), fmtDur(s.settled), window, s.hwm, s.rss, s.files, s.cpu, s.cpuTotal)
	e.edgecore.stop()
	e.fakecri.stop()
	return s
}

// servicesSettled tells whether the node's log shows a load balancer of
// every Service over its 5 endpoints and the node's DNS responder answers
// every Service's name with its ClusterIP.
func servicesSettled(e *edge, vips map[string]string) (bool, error) {
	data, err := os.ReadFile(e.edgecore.log)
	if err != nil {
		return false, err
	}
	for i := 0; i < benchServiceCount; i++ {
		name := fmt.Sprintf("svc-%d", i)
		eps := benchEndpoints(i)
		for j := range eps {
			eps[j] += "(remote)"
		}
		lb := fmt.Sprintf("TCP %s:80->8080 endpoints=[%s]", vips[name], strings.Join(eps, " "))
		if !bytes.Contains(data, []byte(lb)) {
			return false, fmt.Errorf("no load balancer %q yet", lb)
		}
	}
	dns := netip.MustParseAddrPort(svcHostIP + ":53")
	for i := 0; i < benchServiceCount; i++ {
		name := fmt.Sprintf("svc-%d", i)
		if got, err := resolve(dns, name+".default.svc.cluster.local.", false); got != vips[name] {
			return false, fmt.Errorf("%s: %q, %v", name, got, err)
		}
	}
	return true, nil
}

// servicesTable renders the medians of the Services part.
func servicesTable(samples map[bool][]svcSample, runs int, window time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nServices at the node, %s: edgecore-hnsrec.exe under Wine (the proxier programs a recording HNS), "+
		"%d Services with %d endpoints in the cloud, median of %d runs each, run alternately\n\n",
		machine(), benchServiceCount, benchServiceCount*benchEndpointsPer, runs)
	b.WriteString("| figure | Services off | Services on | on − off |\n|---|---|---|---|\n")
	row := func(label, unit string, onOnly bool, get func(svcSample) float64) {
		med := func(on bool) float64 {
			var xs []float64
			for _, s := range samples[on] {
				xs = append(xs, get(s))
			}
			return median(xs)
		}
		off, on := med(false), med(true)
		if onOnly {
			fmt.Fprintf(&b, "| %s | – | %s | – |\n", label, fmtUnit(on, unit))
			return
		}
		diff := fmtUnit(on-off, unit)
		if on >= off {
			diff = "+" + diff
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", label, fmtUnit(off, unit), fmtUnit(on, unit), diff)
	}
	row("start to node Ready", "s", false, func(s svcSample) float64 { return s.ready.Seconds() })
	row(fmt.Sprintf("Ready to the %d Services answered by the node's DNS and programmed", benchServiceCount), "s", true,
		func(s svcSample) float64 { return s.settled.Seconds() })
	row(fmt.Sprintf("peak RSS (VmHWM), to %v after that", window), "MiB", false, func(s svcSample) float64 { return s.hwm })
	row(fmt.Sprintf("RSS %v after that", window), "MiB", false, func(s svcSample) float64 { return s.rss })
	row("of which the process's own (not from files)", "MiB", false, func(s svcSample) float64 { return s.rss - s.files })
	row(fmt.Sprintf("CPU seconds in those %v", window), "s", false, func(s svcSample) float64 { return s.cpu })
	row("CPU seconds from start to the end of them", "s", false, func(s svcSample) float64 { return s.cpuTotal })
	b.WriteString("\n")
	return b.String()
}
