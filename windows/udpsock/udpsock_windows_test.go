package udpsock

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Go's own UDP socket either works or fails in the way Refused knows
// (under Wine 8: SIO_UDP_NETRESET refused), so that the DNS responder
// falls back to Listen rather than not serving.
func TestGoSocketWorksOrIsRefused(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err == nil {
		pc.Close()
		t.Log("Go's own UDP socket works on this system: Listen is not needed here")
		return
	}
	if !Refused(err) {
		t.Fatalf("Go's UDP socket failed in a way Refused does not know: %v", err)
	}
	t.Logf("Go's own UDP socket is refused (%v): Listen serves instead", err)
}

// Two sockets of Listen exchange datagrams both ways, and the sender's
// address is the one an answer reaches.
func TestListenExchangesDatagrams(t *testing.T) {
	a, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.LocalAddr().(*net.UDPAddr).Port == 0 {
		t.Fatalf("LocalAddr %v has no port", a.LocalAddr())
	}
	if _, err := b.WriteTo([]byte("query"), a.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, from, err := a.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "query" {
		t.Fatalf("a read %q from %v, %v; want \"query\"", buf[:n], from, err)
	}
	if from.String() != b.LocalAddr().String() {
		t.Errorf("the datagram came from %v, want b's %v", from, b.LocalAddr())
	}
	if _, err := a.WriteTo([]byte("answer"), from); err != nil {
		t.Fatal(err)
	}
	n, _, err = b.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "answer" {
		t.Fatalf("b read %q, %v; want \"answer\"", buf[:n], err)
	}
}

// Closing the socket ends a ReadFrom under way with net.ErrClosed: the
// responder stops with the node.
func TestCloseEndsRead(t *testing.T) {
	c, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := c.ReadFrom(make([]byte, 512))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("ReadFrom after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFrom still blocked 10 s after Close")
	}
}

// A socket of Listen is not inherited by a child process: a child the
// node starts must not keep the DNS responder's port once the node ends.
func TestListenSocketNotInherited(t *testing.T) {
	pc, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	// x/sys/windows has SetHandleInformation only.
	get := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetHandleInformation")
	var flags uint32
	if r, _, err := get.Call(uintptr(pc.(*conn).fd), uintptr(unsafe.Pointer(&flags))); r == 0 {
		t.Fatalf("GetHandleInformation of the socket: %v", err)
	}
	if flags&windows.HANDLE_FLAG_INHERIT != 0 {
		t.Errorf("the socket's handle flags are %#x: inheritable", flags)
	}
}
