//go:build !windows

package udpsock

import (
	"net"
	"net/netip"
)

// Listen is Windows' only; elsewhere Go's own UDP socket always works.
func Listen(netip.AddrPort) (net.PacketConn, error) { return nil, ErrUnsupported }

// Refused tells whether err is Go's UDP socket refused by the system's
// socket options: never, here.
func Refused(error) bool { return false }
