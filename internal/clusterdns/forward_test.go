package clusterdns

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// upstream is a resolver that answers from a table, counting the queries.
type upstream struct {
	asked  map[netip.AddrPort]int
	answer func(server netip.AddrPort, q dnsmessage.Message) (dnsmessage.Message, error)
}

func (u *upstream) exchange(_ context.Context, server netip.AddrPort, raw []byte) ([]byte, error) {
	u.asked[server]++
	var q dnsmessage.Message
	if err := q.Unpack(raw); err != nil {
		return nil, err
	}
	m, err := u.answer(server, q)
	if err != nil {
		return nil, err
	}
	return m.Pack()
}

func aRecord(name dnsmessage.Name, ttl uint32) dnsmessage.Resource {
	return dnsmessage.Resource{Header: dnsmessage.ResourceHeader{Name: name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: ttl},
		Body: &dnsmessage.AResource{A: [4]byte{192, 0, 2, 7}}}
}

var (
	first  = netip.MustParseAddrPort("192.0.2.53:53")
	second = netip.MustParseAddrPort("198.51.100.53:53")
)

func newTestForward(u *upstream, now *time.Time, entries int) *Forward {
	f := NewForward([]netip.AddrPort{first, second}, nil, entries)
	f.exchange = u.exchange
	f.now = func() time.Time { return *now }
	return f
}

func question(name string) dnsmessage.Question {
	return dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
}

func TestForwardCachesWithinTheAnswersTTL(t *testing.T) {
	u := &upstream{asked: map[netip.AddrPort]int{}, answer: func(_ netip.AddrPort, q dnsmessage.Message) (dnsmessage.Message, error) {
		return dnsmessage.Message{Header: dnsmessage.Header{ID: q.Header.ID, Response: true, RecursionAvailable: true},
			Questions: q.Questions, Answers: []dnsmessage.Resource{aRecord(q.Questions[0].Name, 60)}}, nil
	}}
	now := time.Unix(1000, 0)
	f := newTestForward(u, &now, 0)
	ctx := context.Background()
	if _, err := f.Forward(ctx, question("example.com."), true); err != nil {
		t.Fatal(err)
	}
	now = now.Add(25 * time.Second)
	m, err := f.Forward(ctx, question("EXAMPLE.com."), true)
	if err != nil {
		t.Fatal(err)
	}
	if u.asked[first] != 1 {
		t.Fatalf("asked the resolver %d times, want once (the second from the cache)", u.asked[first])
	}
	if got := m.Answers[0].Header.TTL; got != 35 {
		t.Fatalf("cached answer after 25 s has TTL %d, want 35", got)
	}
	now = now.Add(36 * time.Second)
	if _, err := f.Forward(ctx, question("example.com."), true); err != nil {
		t.Fatal(err)
	}
	if u.asked[first] != 2 {
		t.Fatalf("an expired answer was served from the cache")
	}
}

func TestForwardPassesOverFailingResolversAndCapsNegativeCaching(t *testing.T) {
	u := &upstream{asked: map[netip.AddrPort]int{}}
	u.answer = func(s netip.AddrPort, q dnsmessage.Message) (dnsmessage.Message, error) {
		switch {
		case s == first && q.Questions[0].Name.String() == "spoof.example.":
			return dnsmessage.Message{Header: dnsmessage.Header{ID: q.Header.ID + 1, Response: true}, Questions: q.Questions,
				Answers: []dnsmessage.Resource{aRecord(q.Questions[0].Name, 60)}}, nil
		case s == first:
			return dnsmessage.Message{}, errors.New("timeout")
		}
		soa := dnsmessage.Resource{Header: dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName("example."), Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET, TTL: 3600},
			Body: &dnsmessage.SOAResource{NS: dnsmessage.MustNewName("ns.example."), MBox: dnsmessage.MustNewName("h.example."), MinTTL: 3600}}
		return dnsmessage.Message{Header: dnsmessage.Header{ID: q.Header.ID, Response: true, RCode: dnsmessage.RCodeNameError},
			Questions: q.Questions, Authorities: []dnsmessage.Resource{soa}}, nil
	}
	now := time.Unix(1000, 0)
	f := newTestForward(u, &now, 0)
	ctx := context.Background()
	m, err := f.Forward(ctx, question("missing.example."), true)
	if err != nil || m.Header.RCode != dnsmessage.RCodeNameError {
		t.Fatalf("NXDOMAIN through the second resolver: %v, %v", m.Header.RCode, err)
	}
	now = now.Add(29 * time.Second)
	_, _ = f.Forward(ctx, question("missing.example."), true)
	now = now.Add(2 * time.Second)
	_, _ = f.Forward(ctx, question("missing.example."), true)
	if u.asked[second] != 2 {
		t.Fatalf("a negative answer with a one-hour SOA minimum was kept past %v: second resolver asked %d times", maxNegativeTTL, u.asked[second])
	}
	// An answer with another ID is not taken.
	m, err = f.Forward(ctx, question("spoof.example."), true)
	if err != nil || m.Header.RCode != dnsmessage.RCodeNameError {
		t.Fatalf("answer with a wrong ID was taken: %v %v", m, err)
	}
	u.answer = func(netip.AddrPort, dnsmessage.Message) (dnsmessage.Message, error) {
		return dnsmessage.Message{}, errors.New("down")
	}
	if _, err := f.Forward(ctx, question("other.example."), true); err == nil {
		t.Fatal("no error when every resolver failed")
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := NewCache(3)
	now := time.Unix(0, 0)
	for i, n := range []string{"a.", "b.", "c."} {
		c.put(cacheKey{name: n}, dnsmessage.Message{}, now.Add(time.Duration(i)), time.Minute)
	}
	c.get(cacheKey{name: "a."}, now) // a is now the most recently used
	c.put(cacheKey{name: "d."}, dnsmessage.Message{}, now, time.Minute)
	if c.Len() != 3 {
		t.Fatalf("cache of 3 holds %d", c.Len())
	}
	if _, ok := c.get(cacheKey{name: "b."}, now); ok {
		t.Fatal("the least recently used entry was kept")
	}
	if _, ok := c.get(cacheKey{name: "a."}, now); !ok {
		t.Fatal("a recently used entry was dropped")
	}
}

func TestForwardSkipsItsOwnAddress(t *testing.T) {
	f := NewForward([]netip.AddrPort{netip.MustParseAddrPort("10.244.7.2:53"), first}, []netip.Addr{netip.MustParseAddr("10.244.7.2")}, 0)
	if got := f.Servers(); len(got) != 1 || got[0] != first {
		t.Fatalf("servers %v", got)
	}
}
