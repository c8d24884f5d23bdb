package clusterdns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// benchSource is a cluster of 100 Services with 5 endpoints each (500
// endpoints), the size `make bench-node` measures the node with.
func benchSource() *fakeSource {
	f := &fakeSource{services: map[string]*v1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{}}
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("svc-%d", i)
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name},
			Spec: v1.ServiceSpec{ClusterIP: fmt.Sprintf("10.96.%d.%d", i/200, i%200+10), Ports: []v1.ServicePort{{Name: "http", Port: 80}}}}
		e := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name + "-x"}, AddressType: discoveryv1.AddressTypeIPv4}
		for j := 0; j < 5; j++ {
			e.Endpoints = append(e.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.%d", i, j+2)}})
		}
		f.add(s, e)
	}
	return f
}

// BenchmarkResponderUDP measures the DNS responder as pods use it: A
// queries for Service names over UDP on loopback, 32 clients at once. It
// reports answers per second and the 99th percentile of the round trip
// (`make bench-node` prints it; docs/measurements.md keeps the figures).
func BenchmarkResponderUDP(b *testing.B) {
	s := &Server{Addr: netip.MustParseAddrPort("127.0.0.1:0"), Responder: NewResponder("cluster.local", benchSource(), nil)}
	pc, l, err := s.Listen()
	if err != nil {
		b.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx, pc, l); close(done) }()
	defer func() { cancel(); <-done }()

	const clients = 32
	queries := make([][]byte, 100)
	for i := range queries {
		queries[i] = query(b, fmt.Sprintf("svc-%d.bench.svc.cluster.local.", i), dnsmessage.TypeA, false)
	}
	var mu sync.Mutex
	var rtts []time.Duration
	b.ResetTimer()
	begin := time.Now()
	var wg sync.WaitGroup
	per := b.N/clients + 1
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn, err := net.Dial("udp", addr)
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Close()
			buf := make([]byte, 1500)
			local := make([]time.Duration, 0, per)
			lost := 0
			for i := 0; i < per; i++ {
				q := queries[(c+i)%len(queries)]
				t0 := time.Now()
				_ = conn.SetDeadline(t0.Add(2 * time.Second))
				if _, err := conn.Write(q); err != nil {
					b.Error(err)
					return
				}
				// A dropped query (the responder at its limit) is asked
				// again, as a resolver would.
				if _, err := conn.Read(buf); err != nil {
					if lost++; lost > 100 {
						b.Errorf("client %d: 100 queries unanswered: %v", c, err)
						return
					}
					i--
					continue
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			rtts = append(rtts, local...)
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b.StopTimer()
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	if len(rtts) == 0 {
		b.Fatal("no answers")
	}
	b.ReportMetric(float64(len(rtts))/elapsed.Seconds(), "answers/s")
	b.ReportMetric(float64(rtts[len(rtts)*99/100].Microseconds()), "p99-µs")
}
