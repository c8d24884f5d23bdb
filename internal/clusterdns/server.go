package clusterdns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/udpsock"
)

// Bounds of the listener: queries answered at once over UDP (more are
// dropped, as a loaded DNS server does, and the client asks again), TCP
// connections at once, and how long a TCP connection may sit idle.
const (
	maxInFlight = 64
	maxTCPConns = 16
	tcpIdle     = 10 * time.Second
)

// Server serves a Responder on one address, over UDP and TCP.
type Server struct {
	// Addr is where it listens: one unicast address (the pod network's
	// host address), never a wildcard.
	Addr netip.AddrPort
	// Allow says which clients get an answer (the pod range and the
	// host); nil: every client. Others get nothing back.
	Allow     func(netip.Addr) bool
	Responder *Responder

	answered, dropped atomic.Uint64
}

// Counts are what the server did since it started.
type Counts struct{ Answered, Dropped uint64 }

// Counts reports what the server did.
func (s *Server) Counts() Counts {
	return Counts{Answered: s.answered.Load(), Dropped: s.dropped.Load()}
}

// Listen binds the UDP and TCP sockets on s.Addr. A wildcard or multicast
// address is refused: the responder answers on the pod network only.
func (s *Server) Listen() (net.PacketConn, net.Listener, error) {
	a := s.Addr.Addr()
	if !a.IsValid() || a.IsUnspecified() || a.IsMulticast() {
		return nil, nil, fmt.Errorf("the DNS responder listens on one address of the node, not %s", s.Addr)
	}
	pc, err := net.ListenPacket("udp", s.Addr.String())
	if udpsock.Refused(err) {
		// Go's socket needs a socket option the system refuses (Wine 8;
		// never Windows Server 2019 or later): a plain socket serves.
		pc, err = udpsock.Listen(s.Addr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the DNS responder cannot listen on UDP %s: %w", s.Addr, err)
	}
	l, err := net.Listen("tcp", s.Addr.String())
	if err != nil {
		pc.Close()
		return nil, nil, fmt.Errorf("the DNS responder cannot listen on TCP %s: %w", s.Addr, err)
	}
	return pc, l, nil
}

// Serve answers on pc and l until ctx ends, then closes both.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn, l net.Listener) error {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		<-ctx.Done()
		pc.Close()
		l.Close()
	}()
	var udpErr, tcpErr error
	go func() { defer wg.Done(); udpErr = s.serveUDP(ctx, pc) }()
	go func() { defer wg.Done(); tcpErr = s.serveTCP(ctx, l) }()
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(udpErr, tcpErr)
}

func (s *Server) allowed(a net.Addr) bool {
	if s.Allow == nil {
		return true
	}
	var ip netip.Addr
	switch v := a.(type) {
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(v.IP)
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(v.IP)
	default:
		return false
	}
	return ip.IsValid() && s.Allow(ip.Unmap())
}

func (s *Server) serveUDP(ctx context.Context, pc net.PacketConn) error {
	sem := make(chan struct{}, maxInFlight)
	for {
		buf := make([]byte, maxUDPEDNS)
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !s.allowed(from) {
			s.dropped.Add(1)
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			s.dropped.Add(1)
			continue
		}
		go func(q []byte) {
			defer func() { <-sem }()
			if resp := s.Responder.Answer(ctx, q, true); resp != nil {
				if _, err := pc.WriteTo(resp, from); err == nil {
					s.answered.Add(1)
				}
			} else {
				s.dropped.Add(1)
			}
		}(buf[:n])
	}
}

func (s *Server) serveTCP(ctx context.Context, l net.Listener) error {
	sem := make(chan struct{}, maxTCPConns)
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !s.allowed(conn.RemoteAddr()) {
			s.dropped.Add(1)
			conn.Close()
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			s.dropped.Add(1)
			conn.Close()
			continue
		}
		go func() {
			defer func() { <-sem }()
			defer conn.Close()
			s.serveConn(ctx, conn)
		}()
	}
}

// serveConn answers the queries of one TCP connection, one after the
// other, until the client closes it or it sits idle.
func (s *Server) serveConn(ctx context.Context, conn net.Conn) {
	for {
		_ = conn.SetDeadline(time.Now().Add(tcpIdle))
		var l [2]byte
		if _, err := io.ReadFull(conn, l[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(conn, q); err != nil {
			return
		}
		resp := s.Responder.Answer(ctx, q, false)
		if resp == nil {
			s.dropped.Add(1)
			return
		}
		out := make([]byte, 2+len(resp))
		binary.BigEndian.PutUint16(out, uint16(len(resp)))
		copy(out[2:], resp)
		if _, err := conn.Write(out); err != nil {
			return
		}
		s.answered.Add(1)
	}
}
