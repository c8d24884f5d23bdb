//go:build e2e

package e2e

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoServer answers each line with the same line, as a stand-in for
// cloudcore behind the link proxy.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return l.Addr().String()
}

// roundTrip writes a line and reads it back within d.
func roundTrip(c net.Conn, r *bufio.Reader, d time.Duration) (time.Duration, error) {
	begin := time.Now()
	c.SetDeadline(begin.Add(d))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	line, err := r.ReadString('\n')
	if err == nil && line != "ping\n" {
		err = errors.New("got " + line)
	}
	return time.Since(begin), err
}

// Each mode of the link proxy does to a connection what the harness says
// it does: the faults of `make chaos` are only as good as these.
func TestLinkProxyModes(t *testing.T) {
	p, addrs := startLinkProxy(t, echoServer(t))
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addrs[0])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	c, r := dial()
	if _, err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Fatalf("up: %v", err)
	}

	p.set(linkDelay, 300*time.Millisecond)
	if took, err := roundTrip(c, r, 5*time.Second); err != nil || took < 600*time.Millisecond {
		t.Errorf("delay of 300 ms each way: round trip %v, %v; want at least 600 ms", took, err)
	}
	p.set(linkUp, 0)

	// A black hole: the connection stays open and carries nothing, for
	// good; a new one after the hole works.
	p.set(linkBlackhole, 0)
	if _, err := roundTrip(c, r, time.Second); !isTimeout(err) {
		t.Errorf("black hole: %v, want a time-out", err)
	}
	p.set(linkUp, 0)
	if _, err := roundTrip(c, r, time.Second); !isTimeout(err) {
		t.Errorf("a connection the black hole swallowed, after it: %v, want a time-out", err)
	}
	c, r = dial()
	if _, err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Errorf("a new connection after the black hole: %v", err)
	}

	// A cut: the connection ends (EOF), new ones end at once.
	p.set(linkCut, 0)
	if _, err := roundTrip(c, r, 5*time.Second); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		t.Errorf("cut: %v, want the connection ended", err)
	}
	c, r = dial()
	if _, err := roundTrip(c, r, 5*time.Second); err == nil || isTimeout(err) {
		t.Errorf("a new connection during the cut: %v, want it ended", err)
	}
	p.set(linkUp, 0)

	// Resets: RST on the open connection and on new ones.
	c, r = dial()
	if _, err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Fatalf("up again: %v", err)
	}
	p.set(linkReset, 0)
	if _, err := roundTrip(c, r, 5*time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset: %v, want ECONNRESET", err)
	}
	c, r = dial()
	if _, err := roundTrip(c, r, 5*time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a new connection during the resets: %v, want ECONNRESET", err)
	}
	p.set(linkUp, 0)
	c, r = dial()
	if _, err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Errorf("up after the resets: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
