//go:build e2e

package e2e

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The link faults of the fault-injection harness (chaos_test.go): a TCP
// proxy between the edge and cloudcore, which the node's configuration
// names in cloudcore's place for the hub (websocket) and the stream
// tunnel, and which can cut, black-hole, delay and reset what goes through
// it.
const (
	linkUp        = "up"
	linkCut       = "cut"       // open connections closed, new ones refused
	linkBlackhole = "blackhole" // nothing goes through, and nothing says so
	linkDelay     = "delay"     // every chunk delivered late, in order
	linkReset     = "reset"     // connections reset (RST), new ones too
)

// linkProxy forwards each listener's connections to its target in
// cloudcore with the link's current mode.
type linkProxy struct {
	mu      sync.Mutex
	mode    string
	latency time.Duration
	conns   map[*linkConn]struct{}
	ls      []net.Listener
	// accepted counts connections the edge opened; dead, connections a
	// black hole left behind (they stay silent until the proxy closes).
	accepted atomic.Int64
	dead     atomic.Int64
}

// linkConn is one connection through the proxy: the edge's side and
// cloudcore's.
type linkConn struct {
	edge, cloud net.Conn
	// holed is set when a black hole swallowed the connection: it never
	// carries anything again, as a connection whose packets vanished
	// stays dead once the path is back (its peers' sequence numbers no
	// longer meet), until an end notices and closes it.
	holed atomic.Bool
	once  sync.Once
}

func (lc *linkConn) close(reset bool) {
	lc.once.Do(func() {
		for _, c := range []net.Conn{lc.edge, lc.cloud} {
			if c == nil {
				continue
			}
			if tc, ok := c.(*net.TCPConn); ok && reset {
				tc.SetLinger(0) // close sends RST
			}
			c.Close()
		}
	})
}

// startLinkProxy listens on a free loopback port for each target and
// returns the proxy and the addresses, in the order of targets.
func startLinkProxy(t *testing.T, targets ...string) (*linkProxy, []string) {
	t.Helper()
	p := &linkProxy{mode: linkUp, conns: map[*linkConn]struct{}{}}
	var addrs []string
	for _, target := range targets {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fatal(t, err)
		}
		p.ls = append(p.ls, l)
		addrs = append(addrs, l.Addr().String())
		go p.serve(l, target)
	}
	t.Cleanup(p.close)
	return p, addrs
}

func (p *linkProxy) close() {
	for _, l := range p.ls {
		l.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for lc := range p.conns {
		lc.close(false)
	}
}

// set changes the link's mode: what it does to the connections open now
// and to those that come.
func (p *linkProxy) set(mode string, latency time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.latency = mode, latency
	for lc := range p.conns {
		switch mode {
		case linkCut:
			lc.close(false)
		case linkReset:
			lc.close(true)
		case linkBlackhole:
			if !lc.holed.Swap(true) {
				p.dead.Add(1)
			}
		}
	}
}

func (p *linkProxy) state() (string, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode, p.latency
}

func (p *linkProxy) serve(l net.Listener, target string) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		go p.handle(in, target)
	}
}

func (p *linkProxy) handle(in net.Conn, target string) {
	lc := &linkConn{edge: in}
	mode, _ := p.state()
	switch mode {
	case linkCut:
		lc.close(false)
		return
	case linkReset:
		// The edge's first bytes (its TLS hello) are answered with RST.
		in.SetReadDeadline(time.Now().Add(5 * time.Second))
		in.Read(make([]byte, 512))
		lc.close(true)
		return
	case linkBlackhole:
		lc.holed.Store(true)
		p.dead.Add(1)
	default:
		out, err := net.DialTimeout("tcp", target, 5*time.Second)
		if err != nil {
			// cloudcore is away: the edge sees its connection end.
			lc.close(false)
			return
		}
		lc.cloud = out
	}
	p.mu.Lock()
	p.conns[lc] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, lc)
		p.mu.Unlock()
		lc.close(false)
	}()
	if lc.cloud == nil {
		// Swallowed from the start: read and drop until the edge gives up.
		io.Copy(io.Discard, in)
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(lc, lc.cloud, lc.edge); done <- struct{}{} }()
	go func() { p.pipe(lc, lc.edge, lc.cloud); done <- struct{}{} }()
	<-done
	if lc.holed.Load() {
		// Nothing of cloudcore's side reaches a swallowed connection,
		// its end included: the edge's side stays open and silent
		// until the edge closes it.
		lc.cloud.Close()
		<-done
	}
}

// pipe copies from src to dst chunk by chunk, each chunk delivered the
// link's latency after it was read (in order), and dropped once the
// connection fell into a black hole.
func (p *linkProxy) pipe(lc *linkConn, dst, src net.Conn) {
	type chunk struct {
		data []byte
		due  time.Time
	}
	queue := make(chan chunk, 4096)
	go func() {
		defer close(queue)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 && !lc.holed.Load() {
				_, latency := p.state()
				queue <- chunk{buf[:n], time.Now().Add(latency)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range queue {
		time.Sleep(time.Until(c.due))
		if lc.holed.Load() {
			continue
		}
		if _, err := dst.Write(c.data); err != nil {
			lc.close(false)
			return
		}
	}
	// The source ended: so does the connection, both ways, unless a
	// black hole keeps it silent.
	if !lc.holed.Load() {
		lc.close(false)
	}
}
