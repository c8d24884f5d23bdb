package pipe

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// A Unix socket's server is the process that listens on it, as the kernel
// recorded it: here this test, with its user.
func TestServerOfReadsTheSocketsPeer(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	c, err := net.Dial("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ServerOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() || s.UID != os.Geteuid() || s.SDDL != "" {
		t.Errorf("ServerOf = %+v, want process %d, user %d", s, os.Getpid(), os.Geteuid())
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	tc, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := ServerOf(tc); err == nil {
		t.Error("ServerOf of a TCP connection gave no error")
	}
}
