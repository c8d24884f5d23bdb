package clusterdns

import (
	"context"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// FuzzAnswer feeds the responder arbitrary packets: it must never panic,
// and whatever it answers must be a DNS message with the query's ID. The
// seed corpus (testdata/fuzz/FuzzAnswer) holds malformed packets: name
// compression loops, counts past the end, oversized labels, a truncated
// OPT record. Run `go test -fuzz FuzzAnswer ./internal/clusterdns` to
// search further.
func FuzzAnswer(f *testing.F) {
	for _, q := range []struct {
		name string
		t    dnsmessage.Type
	}{
		{"web.default.svc.cluster.local.", dnsmessage.TypeA},
		{"_sql._tcp.pg.db.svc.cluster.local.", dnsmessage.TypeSRV},
		{"10-244-1-7.default.pod.cluster.local.", dnsmessage.TypeAAAA},
		{"example.com.", dnsmessage.TypeMX},
	} {
		f.Add(query(f, q.name, q.t, false), true)
		f.Add(query(f, q.name, q.t, true), false)
	}
	r := NewResponder("cluster.local", newSource(), &fakeForward{})
	f.Fuzz(func(t *testing.T, q []byte, udp bool) {
		resp := r.Answer(context.Background(), q, udp)
		if resp == nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(resp); err != nil {
			t.Fatalf("answer to %x does not parse: %v", q, err)
		}
		if len(q) < 2 || m.Header.ID != uint16(q[0])<<8|uint16(q[1]) || !m.Header.Response {
			t.Fatalf("answer to %x has header %+v", q, m.Header)
		}
		if udp && len(resp) > maxUDPEDNS {
			t.Fatalf("UDP answer of %d bytes", len(resp))
		}
	})
}
