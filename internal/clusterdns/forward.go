package clusterdns

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// errRefused is Forward's error when it has no resolver to ask.
var errRefused = errors.New("no DNS server to forward to")

// Cache bounds, so that what the node remembers of the outside world has
// a fixed ceiling: entries, the size of one, and how long any is kept.
const (
	DefaultCacheEntries = 4096
	maxCachedMessage    = 4096
	maxCacheTTL         = 5 * time.Minute
	maxNegativeTTL      = 30 * time.Second
	// ForwardTimeout bounds one resolver's answer.
	ForwardTimeout = 2 * time.Second
)

// Exchange sends the query message to server and returns its answer.
type Exchange func(ctx context.Context, server netip.AddrPort, query []byte) ([]byte, error)

// Forward asks the host's resolvers, in order, for names outside the
// cluster, and caches their answers.
type Forward struct {
	servers  []netip.AddrPort
	exchange Exchange
	cache    *Cache
	now      func() time.Time
}

// NewForward forwards to servers (the host's resolvers, port 53 unless
// given), except any of skip (the responder's own address: asking itself
// would loop), through a cache of entries answers.
func NewForward(servers []netip.AddrPort, skip []netip.Addr, entries int) *Forward {
	var keep []netip.AddrPort
	for _, s := range servers {
		mine := false
		for _, a := range skip {
			if s.Addr().Unmap() == a.Unmap() {
				mine = true
			}
		}
		if !mine && s.Addr().IsValid() {
			keep = append(keep, s)
		}
	}
	return &Forward{servers: keep, exchange: UDPThenTCP, cache: NewCache(entries), now: time.Now}
}

// Servers are the resolvers Forward asks.
func (f *Forward) Servers() []netip.AddrPort { return append([]netip.AddrPort(nil), f.servers...) }

// Forward answers q from the cache or from the first resolver that
// answers it (a resolver that fails or refuses is passed over).
func (f *Forward) Forward(ctx context.Context, q dnsmessage.Question, _ bool) (dnsmessage.Message, error) {
	key := cacheKey{name: strings.ToLower(q.Name.String()), typ: q.Type, class: q.Class}
	if m, ok := f.cache.get(key, f.now()); ok {
		return m, nil
	}
	if len(f.servers) == 0 {
		return dnsmessage.Message{}, errRefused
	}
	id, err := randomID()
	if err != nil {
		return dnsmessage.Message{}, err
	}
	var opt dnsmessage.ResourceHeader
	_ = opt.SetEDNS0(maxUDPEDNS, dnsmessage.RCodeSuccess, false)
	query, err := (&dnsmessage.Message{
		Header:      dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions:   []dnsmessage.Question{q},
		Additionals: []dnsmessage.Resource{{Header: opt, Body: &dnsmessage.OPTResource{}}},
	}).Pack()
	if err != nil {
		return dnsmessage.Message{}, err
	}
	var errs []error
	for _, s := range f.servers {
		ctx, cancel := context.WithTimeout(ctx, ForwardTimeout)
		raw, err := f.exchange(ctx, s, query)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s, err))
			continue
		}
		var m dnsmessage.Message
		if err := m.Unpack(raw); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s, err))
			continue
		}
		if !m.Header.Response || m.Header.ID != id || len(m.Questions) != 1 || !sameQuestion(m.Questions[0], q) {
			errs = append(errs, fmt.Errorf("%s: an answer to another query", s))
			continue
		}
		if m.Header.RCode != dnsmessage.RCodeSuccess && m.Header.RCode != dnsmessage.RCodeNameError {
			errs = append(errs, fmt.Errorf("%s: %s", s, m.Header.RCode))
			continue
		}
		if len(raw) <= maxCachedMessage && !m.Header.Truncated {
			if ttl := cacheTTL(m); ttl > 0 {
				f.cache.put(key, m, f.now(), ttl)
			}
		}
		return m, nil
	}
	return dnsmessage.Message{}, errors.Join(errs...)
}

func sameQuestion(a, b dnsmessage.Question) bool {
	return a.Type == b.Type && a.Class == b.Class && strings.EqualFold(a.Name.String(), b.Name.String())
}

func randomID() (uint16, error) {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b[:]), nil
}

// cacheTTL is how long m may be kept: its smallest TTL for an answer, its
// SOA's minimum for a negative one (RFC 2308), within the caps; 0: not
// at all.
func cacheTTL(m dnsmessage.Message) time.Duration {
	var ttl uint32
	first := true
	take := func(t uint32) {
		if first || t < ttl {
			ttl, first = t, false
		}
	}
	if len(m.Answers) > 0 {
		for _, a := range m.Answers {
			take(a.Header.TTL)
		}
		return min(time.Duration(ttl)*time.Second, maxCacheTTL)
	}
	for _, a := range m.Authorities {
		if soa, ok := a.Body.(*dnsmessage.SOAResource); ok {
			take(min(a.Header.TTL, soa.MinTTL))
		}
	}
	if first {
		return 0
	}
	return min(time.Duration(ttl)*time.Second, maxNegativeTTL)
}

type cacheKey struct {
	name  string
	typ   dnsmessage.Type
	class dnsmessage.Class
}

type cacheEntry struct {
	key     cacheKey
	msg     dnsmessage.Message
	stored  time.Time
	expires time.Time
}

// Cache keeps answers until they expire, the least recently used going
// first once it holds its limit.
type Cache struct {
	mu    sync.Mutex
	limit int
	order *list.List // front: most recently used
	items map[cacheKey]*list.Element
}

// NewCache holds up to entries answers (DefaultCacheEntries when not
// positive).
func NewCache(entries int) *Cache {
	if entries <= 0 {
		entries = DefaultCacheEntries
	}
	return &Cache{limit: entries, order: list.New(), items: map[cacheKey]*list.Element{}}
}

// Len is how many answers the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *Cache) put(k cacheKey, m dnsmessage.Message, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.Remove(el)
		delete(c.items, k)
	}
	for c.order.Len() >= c.limit {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
	c.items[k] = c.order.PushFront(&cacheEntry{key: k, msg: m, stored: now, expires: now.Add(ttl)})
}

// get returns the answer kept for k with its TTLs lowered by the time it
// has been kept.
func (c *Cache) get(k cacheKey, now time.Time) (dnsmessage.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return dnsmessage.Message{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, k)
		return dnsmessage.Message{}, false
	}
	c.order.MoveToFront(el)
	age := uint32(now.Sub(e.stored) / time.Second)
	m := e.msg
	m.Answers = aged(e.msg.Answers, age)
	m.Authorities = aged(e.msg.Authorities, age)
	m.Additionals = aged(e.msg.Additionals, age)
	return m, true
}

func aged(rrs []dnsmessage.Resource, age uint32) []dnsmessage.Resource {
	if len(rrs) == 0 {
		return nil
	}
	out := make([]dnsmessage.Resource, len(rrs))
	copy(out, rrs)
	for i := range out {
		if out[i].Header.Type == dnsmessage.TypeOPT {
			continue
		}
		if out[i].Header.TTL > age {
			out[i].Header.TTL -= age
		} else {
			out[i].Header.TTL = 0
		}
	}
	return out
}

// UDPThenTCP asks server over UDP, and again over TCP when the answer
// comes back truncated.
func UDPThenTCP(ctx context.Context, server netip.AddrPort, query []byte) ([]byte, error) {
	resp, err := exchangeUDP(ctx, server, query)
	if err != nil {
		return nil, err
	}
	if len(resp) > 2 && resp[2]&0x02 != 0 { // TC
		return exchangeTCP(ctx, server, query)
	}
	return resp, nil
}

func deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(ForwardTimeout)
}

func exchangeUDP(ctx context.Context, server netip.AddrPort, query []byte) ([]byte, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", server.String())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline(ctx))
	if _, err := conn.Write(query); err != nil {
		return nil, err
	}
	buf := make([]byte, maxTCP)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return nil, err
		}
		// Anything but an answer with the query's ID is ignored (a late
		// answer to an earlier query, or a spoofing attempt).
		if n >= 12 && buf[0] == query[0] && buf[1] == query[1] && buf[2]&0x80 != 0 {
			return append([]byte(nil), buf[:n]...), nil
		}
	}
}

func exchangeTCP(ctx context.Context, server netip.AddrPort, query []byte) ([]byte, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", server.String())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline(ctx))
	msg := make([]byte, 2+len(query))
	binary.BigEndian.PutUint16(msg, uint16(len(query)))
	copy(msg[2:], query)
	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(conn, l[:]); err != nil {
		return nil, err
	}
	resp := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(conn, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// ResolvConfServers reads the nameserver lines of a resolv.conf.
func ResolvConfServers(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, f[1])
		}
	}
	return out
}
