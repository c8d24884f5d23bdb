//go:build windows

package udpsock

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Refused tells whether err is net.ListenPacket's failure to turn off
// the reporting of unreachable ports or networks on a new UDP socket
// (WSAIoctl answering WSAEOPNOTSUPP, as Wine 8 does for
// SIO_UDP_NETRESET): the case Listen is for.
func Refused(err error) bool {
	var se *os.SyscallError
	return errors.As(err, &se) && se.Syscall == "wsaioctl" && errors.Is(se.Err, windows.WSAEOPNOTSUPP)
}

// recvTimeout bounds each blocking receive, so that a socket closed by
// another goroutine is noticed even where closing it does not end a
// receive under way.
const recvTimeout = 500 * time.Millisecond

// Listen binds a UDP socket on addr, turning off the reporting of
// unreachable ports as far as the system allows (a refusal is not an
// error: such a report only ends one receive, which ReadFrom retries).
func Listen(addr netip.AddrPort) (net.PacketConn, error) {
	family := windows.AF_INET
	if addr.Addr().Is6() && !addr.Addr().Is4In6() {
		family = windows.AF_INET6
	}
	fd, err := windows.Socket(family, windows.SOCK_DGRAM, windows.IPPROTO_UDP)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// Not inherited by a child process, as Go's own sockets are not: a
	// child must not keep the node's port after the node ends.
	if err := windows.SetHandleInformation(fd, windows.HANDLE_FLAG_INHERIT, 0); err != nil {
		windows.Closesocket(fd)
		return nil, os.NewSyscallError("sethandleinformation", err)
	}
	var ret uint32
	flag := uint32(0)
	_ = windows.WSAIoctl(fd, windows.SIO_UDP_CONNRESET, (*byte)(unsafe.Pointer(&flag)), uint32(unsafe.Sizeof(flag)), nil, 0, &ret, nil, 0)
	if err := windows.SetsockoptInt(fd, windows.SOL_SOCKET, windows.SO_RCVTIMEO, int(recvTimeout/time.Millisecond)); err != nil {
		windows.Closesocket(fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	if err := windows.Bind(fd, sockaddr(addr)); err != nil {
		windows.Closesocket(fd)
		return nil, &net.OpError{Op: "listen", Net: "udp", Addr: net.UDPAddrFromAddrPort(addr), Err: os.NewSyscallError("bind", err)}
	}
	local := addr
	if sa, err := windows.Getsockname(fd); err == nil {
		local = addrPort(sa)
	}
	return &conn{fd: fd, local: local}, nil
}

func sockaddr(a netip.AddrPort) windows.Sockaddr {
	if a.Addr().Is4() || a.Addr().Is4In6() {
		return &windows.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().Unmap().As4()}
	}
	return &windows.SockaddrInet6{Port: int(a.Port()), Addr: a.Addr().As16()}
}

func addrPort(sa windows.Sockaddr) netip.AddrPort {
	switch v := sa.(type) {
	case *windows.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(v.Addr), uint16(v.Port))
	case *windows.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(v.Addr), uint16(v.Port))
	}
	return netip.AddrPort{}
}

// conn is a net.PacketConn over blocking calls of the socket API, each
// in its goroutine's own system thread. It has no deadlines.
type conn struct {
	fd     windows.Handle
	local  netip.AddrPort
	closed atomic.Bool
}

func (c *conn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		if c.closed.Load() {
			return 0, nil, c.opErr("read", net.ErrClosed)
		}
		n, sa, err := windows.Recvfrom(c.fd, p, 0)
		switch {
		case c.closed.Load():
			return 0, nil, c.opErr("read", net.ErrClosed)
		case errors.Is(err, windows.WSAETIMEDOUT), errors.Is(err, windows.WSAECONNRESET), errors.Is(err, windows.WSAENETRESET):
			// The receive timed out (to look at closed again), or an
			// earlier answer's destination was unreachable.
			continue
		case err != nil:
			return 0, nil, c.opErr("read", os.NewSyscallError("recvfrom", err))
		}
		return n, net.UDPAddrFromAddrPort(addrPort(sa)), nil
	}
}

func (c *conn) WriteTo(p []byte, to net.Addr) (int, error) {
	if c.closed.Load() {
		return 0, c.opErr("write", net.ErrClosed)
	}
	u, ok := to.(*net.UDPAddr)
	if !ok {
		return 0, c.opErr("write", errors.New("not a UDP address"))
	}
	if err := windows.Sendto(c.fd, p, 0, sockaddr(u.AddrPort())); err != nil {
		return 0, c.opErr("write", os.NewSyscallError("sendto", err))
	}
	return len(p), nil
}

func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return c.opErr("close", net.ErrClosed)
	}
	return windows.Closesocket(c.fd)
}

func (c *conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "udp", Addr: c.LocalAddr(), Err: err}
}

func (c *conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.local) }

var errNoDeadline = errors.New("udpsock: deadlines are not supported")

func (c *conn) SetDeadline(time.Time) error      { return errNoDeadline }
func (c *conn) SetReadDeadline(time.Time) error  { return errNoDeadline }
func (c *conn) SetWriteDeadline(time.Time) error { return errNoDeadline }
