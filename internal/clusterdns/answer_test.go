package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fakeSource is a store of Services and their EndpointSlices.
type fakeSource struct {
	services map[string]*v1.Service
	slices   map[string][]*discoveryv1.EndpointSlice
}

func (f *fakeSource) Service(ns, name string) (*v1.Service, bool) {
	s, ok := f.services[ns+"/"+name]
	return s, ok
}

func (f *fakeSource) EndpointSlices(ns, svc string) []*discoveryv1.EndpointSlice {
	return f.slices[ns+"/"+svc]
}

func (f *fakeSource) add(s *v1.Service, slices ...*discoveryv1.EndpointSlice) {
	f.services[s.Namespace+"/"+s.Name] = s
	f.slices[s.Namespace+"/"+s.Name] = slices
}

func newSource() *fakeSource {
	f := &fakeSource{services: map[string]*v1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{}}
	f.add(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.4.20", ClusterIPs: []string{"10.96.4.20"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}, {Name: "dns", Port: 53, Protocol: v1.ProtocolUDP}}}})
	f.add(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dual"},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.4.21", ClusterIPs: []string{"10.96.4.21", "fd00::4:21"}}})
	f.add(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "pg"},
		Spec: v1.ServiceSpec{ClusterIP: v1.ClusterIPNone, Ports: []v1.ServicePort{{Name: "sql", Port: 5432}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "db", Name: "pg-abc"},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("sql"), Port: ptr.To[int32](5432), Protocol: ptr.To(v1.ProtocolTCP)}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.244.1.7"}, Hostname: ptr.To("pg-0"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
				{Addresses: []string{"10.244.2.9"}, Conditions: discoveryv1.EndpointConditions{}},
				{Addresses: []string{"10.244.3.3"}, Hostname: ptr.To("pg-2"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
			},
		})
	f.add(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ext"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "db.example.com"}})
	return f
}

func query(t testing.TB, name string, typ dnsmessage.Type, edns bool) []byte {
	t.Helper()
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: 0x4242, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}}}
	if edns {
		var opt dnsmessage.ResourceHeader
		_ = opt.SetEDNS0(4096, 0, false)
		m.Additionals = []dnsmessage.Resource{{Header: opt, Body: &dnsmessage.OPTResource{}}}
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ask(t *testing.T, r *Responder, name string, typ dnsmessage.Type) dnsmessage.Message {
	t.Helper()
	raw := r.Answer(context.Background(), query(t, name, typ, false), true)
	var m dnsmessage.Message
	if err := m.Unpack(raw); err != nil {
		t.Fatalf("%s %s: answer does not parse: %v", name, typ, err)
	}
	if m.Header.ID != 0x4242 || !m.Header.Response {
		t.Fatalf("%s: header %+v", name, m.Header)
	}
	return m
}

// records renders a section as sorted "type value" strings.
func records(rrs []dnsmessage.Resource) []string {
	var out []string
	for _, r := range rrs {
		switch b := r.Body.(type) {
		case *dnsmessage.AResource:
			out = append(out, fmt.Sprintf("%s A %s", r.Header.Name, netip.AddrFrom4(b.A)))
		case *dnsmessage.AAAAResource:
			out = append(out, fmt.Sprintf("%s AAAA %s", r.Header.Name, netip.AddrFrom16(b.AAAA)))
		case *dnsmessage.SRVResource:
			out = append(out, fmt.Sprintf("%s SRV %d %d %d %s", r.Header.Name, b.Priority, b.Weight, b.Port, b.Target))
		case *dnsmessage.CNAMEResource:
			out = append(out, fmt.Sprintf("%s CNAME %s", r.Header.Name, b.CNAME))
		case *dnsmessage.SOAResource:
			out = append(out, fmt.Sprintf("%s SOA %s", r.Header.Name, b.NS))
		default:
			out = append(out, fmt.Sprintf("%s %s", r.Header.Name, r.Header.Type))
		}
	}
	sort.Strings(out)
	return out
}

func expect(t *testing.T, m dnsmessage.Message, rcode dnsmessage.RCode, want ...string) {
	t.Helper()
	if m.Header.RCode != rcode {
		t.Errorf("%s: rcode %s, want %s", m.Questions[0].Name, m.Header.RCode, rcode)
	}
	got := records(m.Answers)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s %s: answers\n%s\nwant\n%s", m.Questions[0].Name, m.Questions[0].Type, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestServiceNames(t *testing.T) {
	r := NewResponder("cluster.local", newSource(), nil)
	m := ask(t, r, "web.default.svc.cluster.local.", dnsmessage.TypeA)
	expect(t, m, dnsmessage.RCodeSuccess, "web.default.svc.cluster.local. A 10.96.4.20")
	if !m.Header.Authoritative || m.Answers[0].Header.TTL != DefaultTTL {
		t.Errorf("cluster answer not authoritative with TTL %d: %+v", DefaultTTL, m)
	}
	// Names are case-insensitive; the answer keeps the question's case.
	expect(t, ask(t, r, "WEB.Default.SVC.Cluster.Local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, "WEB.Default.SVC.Cluster.Local. A 10.96.4.20")
	// No IPv6 address: the name exists, with no record of that type.
	m = ask(t, r, "web.default.svc.cluster.local.", dnsmessage.TypeAAAA)
	expect(t, m, dnsmessage.RCodeSuccess)
	if got := records(m.Authorities); len(got) != 1 || !strings.Contains(got[0], "SOA") {
		t.Errorf("NODATA without the zone's SOA: %v", got)
	}
	expect(t, ask(t, r, "dual.default.svc.cluster.local.", dnsmessage.TypeAAAA), dnsmessage.RCodeSuccess, "dual.default.svc.cluster.local. AAAA fd00::4:21")
	expect(t, ask(t, r, "nope.default.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeNameError)
	expect(t, ask(t, r, "web.other.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeNameError)
	// Names with names below them are empty non-terminals, not NXDOMAIN.
	for _, n := range []string{"cluster.local.", "svc.cluster.local.", "default.svc.cluster.local.", "pod.cluster.local.", "db.pod.cluster.local."} {
		expect(t, ask(t, r, n, dnsmessage.TypeA), dnsmessage.RCodeSuccess)
	}
	expect(t, ask(t, r, "cluster.local.", dnsmessage.TypeSOA), dnsmessage.RCodeSuccess, "cluster.local. SOA ns.dns.cluster.local.")
	expect(t, ask(t, r, "what.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeNameError)
	expect(t, ask(t, r, "ext.default.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, "ext.default.svc.cluster.local. CNAME db.example.com.")
}

func TestHeadlessServiceNames(t *testing.T) {
	r := NewResponder("cluster.local.", newSource(), nil)
	// Ready endpoints (and those whose readiness is unknown), not the
	// not-ready one.
	expect(t, ask(t, r, "pg.db.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess,
		"pg.db.svc.cluster.local. A 10.244.1.7", "pg.db.svc.cluster.local. A 10.244.2.9")
	expect(t, ask(t, r, "pg-0.pg.db.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, "pg-0.pg.db.svc.cluster.local. A 10.244.1.7")
	expect(t, ask(t, r, "10-244-2-9.pg.db.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, "10-244-2-9.pg.db.svc.cluster.local. A 10.244.2.9")
	expect(t, ask(t, r, "pg-2.pg.db.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeNameError)
	// A ClusterIP Service has no names below it.
	expect(t, ask(t, r, "x.web.default.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeNameError)

	src := newSource()
	pg, _ := src.Service("db", "pg")
	pg.Spec.PublishNotReadyAddresses = true
	r = NewResponder("cluster.local", src, nil)
	expect(t, ask(t, r, "pg-2.pg.db.svc.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, "pg-2.pg.db.svc.cluster.local. A 10.244.3.3")
}

func TestSRV(t *testing.T) {
	r := NewResponder("cluster.local", newSource(), nil)
	m := ask(t, r, "_http._tcp.web.default.svc.cluster.local.", dnsmessage.TypeSRV)
	expect(t, m, dnsmessage.RCodeSuccess, "_http._tcp.web.default.svc.cluster.local. SRV 0 100 80 web.default.svc.cluster.local.")
	if got := records(m.Additionals); len(got) != 1 || got[0] != "web.default.svc.cluster.local. A 10.96.4.20" {
		t.Errorf("additional %v", got)
	}
	expect(t, ask(t, r, "_dns._udp.web.default.svc.cluster.local.", dnsmessage.TypeSRV), dnsmessage.RCodeSuccess,
		"_dns._udp.web.default.svc.cluster.local. SRV 0 100 53 web.default.svc.cluster.local.")
	expect(t, ask(t, r, "_dns._tcp.web.default.svc.cluster.local.", dnsmessage.TypeSRV), dnsmessage.RCodeNameError)
	expect(t, ask(t, r, "_tcp.web.default.svc.cluster.local.", dnsmessage.TypeSRV), dnsmessage.RCodeSuccess)
	expect(t, ask(t, r, "web.default.svc.cluster.local.", dnsmessage.TypeSRV), dnsmessage.RCodeSuccess,
		"web.default.svc.cluster.local. SRV 0 100 80 web.default.svc.cluster.local.", "web.default.svc.cluster.local. SRV 0 100 53 web.default.svc.cluster.local.")
	m = ask(t, r, "_sql._tcp.pg.db.svc.cluster.local.", dnsmessage.TypeSRV)
	expect(t, m, dnsmessage.RCodeSuccess,
		"_sql._tcp.pg.db.svc.cluster.local. SRV 0 50 5432 pg-0.pg.db.svc.cluster.local.",
		"_sql._tcp.pg.db.svc.cluster.local. SRV 0 50 5432 10-244-2-9.pg.db.svc.cluster.local.")
	if got := records(m.Additionals); len(got) != 2 || got[0] != "10-244-2-9.pg.db.svc.cluster.local. A 10.244.2.9" {
		t.Errorf("additional %v", got)
	}
}

func TestPodNames(t *testing.T) {
	r := NewResponder("cluster.local", newSource(), nil)
	expect(t, ask(t, r, "10-244-1-7.default.pod.cluster.local.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, "10-244-1-7.default.pod.cluster.local. A 10.244.1.7")
	expect(t, ask(t, r, "fd00--7.default.pod.cluster.local.", dnsmessage.TypeAAAA), dnsmessage.RCodeSuccess, "fd00--7.default.pod.cluster.local. AAAA fd00::7")
	expect(t, ask(t, r, "10-244-1-7.default.pod.cluster.local.", dnsmessage.TypeAAAA), dnsmessage.RCodeSuccess)
	for _, bad := range []string{"10-244-1.default.pod.cluster.local.", "10-244-1-700.default.pod.cluster.local.", "x.default.pod.cluster.local.", "a.10-244-1-7.default.pod.cluster.local."} {
		expect(t, ask(t, r, bad, dnsmessage.TypeA), dnsmessage.RCodeNameError)
	}
}

// fakeForward answers with one A record, or fails.
type fakeForward struct {
	asked []string
	err   error
}

func (f *fakeForward) Forward(_ context.Context, q dnsmessage.Question, _ bool) (dnsmessage.Message, error) {
	f.asked = append(f.asked, q.Name.String())
	if f.err != nil {
		return dnsmessage.Message{}, f.err
	}
	return dnsmessage.Message{Header: dnsmessage.Header{Response: true, RecursionAvailable: true},
		Questions: []dnsmessage.Question{q},
		Answers: []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60},
			Body: &dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}}}}}, nil
}

func TestOtherNamesAreForwarded(t *testing.T) {
	fwd := &fakeForward{}
	r := NewResponder("cluster.local", newSource(), fwd)
	m := ask(t, r, "example.com.", dnsmessage.TypeA)
	expect(t, m, dnsmessage.RCodeSuccess, "example.com. A 192.0.2.1")
	if m.Header.Authoritative || !m.Header.RecursionAvailable {
		t.Errorf("forwarded answer header %+v", m.Header)
	}
	// A name that merely ends like the zone is not in it.
	ask(t, r, "notcluster.local.", dnsmessage.TypeA)
	if len(fwd.asked) != 2 || fwd.asked[1] != "notcluster.local." {
		t.Errorf("forwarded %v", fwd.asked)
	}
	fwd.err = errors.New("all resolvers failed")
	expect(t, ask(t, r, "example.org.", dnsmessage.TypeA), dnsmessage.RCodeServerFailure)
	expect(t, ask(t, NewResponder("cluster.local", newSource(), nil), "example.org.", dnsmessage.TypeA), dnsmessage.RCodeRefused)
	expect(t, ask(t, NewResponder("cluster.local", newSource(), NewForward(nil, nil, 0)), "example.org.", dnsmessage.TypeA), dnsmessage.RCodeRefused)
}

func TestMalformedAndUnsupportedQueries(t *testing.T) {
	r := NewResponder("cluster.local", newSource(), &fakeForward{})
	ctx := context.Background()
	for _, q := range [][]byte{nil, {1, 2, 3}, make([]byte, 11)} {
		if got := r.Answer(ctx, q, true); got != nil {
			t.Errorf("answered %x to %x", got, q)
		}
	}
	rcode := func(b []byte) dnsmessage.RCode {
		var m dnsmessage.Message
		if err := m.Unpack(b); err != nil {
			t.Fatalf("answer does not parse: %v", err)
		}
		return m.Header.RCode
	}
	// A header and no question: the ID is known, the query is not.
	noQuestion := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	if got := rcode(r.Answer(ctx, noQuestion, true)); got != dnsmessage.RCodeFormatError {
		t.Errorf("truncated question: %s", got)
	}
	two, _ := (&dnsmessage.Message{Questions: []dnsmessage.Question{
		{Name: dnsmessage.MustNewName("a.b."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET},
		{Name: dnsmessage.MustNewName("c.d."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}).Pack()
	if got := rcode(r.Answer(ctx, two, true)); got != dnsmessage.RCodeFormatError {
		t.Errorf("two questions: %s", got)
	}
	status, _ := (&dnsmessage.Message{Header: dnsmessage.Header{OpCode: 2}}).Pack()
	if got := rcode(r.Answer(ctx, status, true)); got != dnsmessage.RCodeNotImplemented {
		t.Errorf("opcode STATUS: %s", got)
	}
	chaos, _ := (&dnsmessage.Message{Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName("version.bind."), Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassCHAOS}}}).Pack()
	if got := rcode(r.Answer(ctx, chaos, true)); got != dnsmessage.RCodeNotImplemented {
		t.Errorf("CHAOS class: %s", got)
	}
	resp, _ := (&dnsmessage.Message{Header: dnsmessage.Header{Response: true}}).Pack()
	if got := r.Answer(ctx, resp, true); got != nil {
		t.Error("answered a response")
	}
}

func TestTruncationAndEDNS(t *testing.T) {
	src := newSource()
	big := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "many-x"}, AddressType: discoveryv1.AddressTypeIPv4}
	for i := 0; i < 60; i++ {
		big.Endpoints = append(big.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.%d", i/200, i%200+1)}})
	}
	src.add(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "many"}, Spec: v1.ServiceSpec{ClusterIP: v1.ClusterIPNone}}, big)
	r := NewResponder("cluster.local", src, nil)
	ctx := context.Background()
	var m dnsmessage.Message
	if err := m.Unpack(r.Answer(ctx, query(t, "many.default.svc.cluster.local.", dnsmessage.TypeA, false), true)); err != nil {
		t.Fatal(err)
	}
	if !m.Header.Truncated || len(m.Answers) != 0 {
		t.Fatalf("60 addresses over plain UDP: TC=%v with %d answers", m.Header.Truncated, len(m.Answers))
	}
	raw := r.Answer(ctx, query(t, "many.default.svc.cluster.local.", dnsmessage.TypeA, true), true)
	if err := m.Unpack(raw); err != nil {
		t.Fatal(err)
	}
	if m.Header.Truncated || len(m.Answers) != 60 || len(raw) > maxUDPEDNS {
		t.Fatalf("with EDNS: TC=%v, %d answers, %d bytes", m.Header.Truncated, len(m.Answers), len(raw))
	}
	if len(m.Additionals) != 1 || m.Additionals[0].Header.Type != dnsmessage.TypeOPT {
		t.Fatalf("EDNS query answered without OPT: %v", m.Additionals)
	}
	if err := m.Unpack(r.Answer(ctx, query(t, "many.default.svc.cluster.local.", dnsmessage.TypeA, false), false)); err != nil || m.Header.Truncated || len(m.Answers) != 60 {
		t.Fatalf("over TCP: %v, TC=%v, %d answers", err, m.Header.Truncated, len(m.Answers))
	}
}
