package clusterdns

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// startServer serves the test source on loopback; it returns the server
// and its TCP address (port 0 gives UDP and TCP ports of their own).
func startServer(t *testing.T, allow func(netip.Addr) bool) (*Server, string) {
	t.Helper()
	s := &Server{Addr: netip.MustParseAddrPort("127.0.0.1:0"), Allow: allow, Responder: NewResponder("cluster.local", newSource(), nil)}
	pc, l, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = netip.MustParseAddrPort(pc.LocalAddr().String())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx, pc, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, l.Addr().String()
}

func TestServerAnswersOverUDPAndTCP(t *testing.T) {
	s, tcpAddr := startServer(t, nil)
	conn, err := net.Dial("udp", s.Addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(query(t, "web.default.svc.cluster.local.", dnsmessage.TypeA, false)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil || len(m.Answers) != 1 {
		t.Fatalf("UDP answer %v %v", m, err)
	}

	tc, err := net.Dial("tcp", tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < 2; i++ { // two queries on one connection
		q := query(t, "pg.db.svc.cluster.local.", dnsmessage.TypeA, false)
		out := append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)
		if _, err := tc.Write(out); err != nil {
			t.Fatal(err)
		}
		var l [2]byte
		if _, err := io.ReadFull(tc, l[:]); err != nil {
			t.Fatal(err)
		}
		resp := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(tc, resp); err != nil {
			t.Fatal(err)
		}
		if err := m.Unpack(resp); err != nil || len(m.Answers) != 2 {
			t.Fatalf("TCP answer %d: %v %v", i, m, err)
		}
	}
	// Counted once the answer is written, which the client may see first.
	for deadline := time.Now().Add(5 * time.Second); s.Counts().Answered != 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("counts %+v", s.Counts())
		}
	}
}

func TestServerIgnoresClientsItDoesNotServe(t *testing.T) {
	s, tcpAddr := startServer(t, func(a netip.Addr) bool { return netip.MustParsePrefix("10.244.7.0/24").Contains(a) })
	conn, err := net.Dial("udp", s.Addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	_, _ = conn.Write(query(t, "web.default.svc.cluster.local.", dnsmessage.TypeA, false))
	if _, err := conn.Read(make([]byte, 512)); err == nil {
		t.Fatal("a client outside the pod range got an answer")
	}
	tc, err := net.Dial("tcp", tcpAddr)
	if err == nil {
		_ = tc.SetDeadline(time.Now().Add(time.Second))
		if _, err := tc.Read(make([]byte, 1)); err == nil {
			t.Fatal("a TCP client outside the pod range was served")
		}
		tc.Close()
	}
	if s.Counts().Dropped < 2 {
		t.Fatalf("counts %+v", s.Counts())
	}
}

func TestServerRefusesWildcardAddresses(t *testing.T) {
	for _, a := range []string{"0.0.0.0:53", "[::]:53", "224.0.0.251:53"} {
		s := &Server{Addr: netip.MustParseAddrPort(a)}
		if _, _, err := s.Listen(); err == nil || !strings.Contains(err.Error(), "one address") {
			t.Errorf("%s: %v", a, err)
		}
	}
}
