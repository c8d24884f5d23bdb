// Package udpsock is a UDP socket made with the Windows socket API
// directly, for where Go's own (net.ListenPacket) cannot be made: Go turns
// off the reporting of unreachable ports and networks on each UDP socket
// (SIO_UDP_CONNRESET, SIO_UDP_NETRESET) and fails the socket when either
// is refused. Wine 8 refuses SIO_UDP_NETRESET (WSAEOPNOTSUPP); Windows
// Server 2019 and later have it, so there this package is never used.
package udpsock

import "errors"

// ErrUnsupported is Listen's error on systems other than Windows.
var ErrUnsupported = errors.New("udpsock: a socket of the Windows socket API exists on Windows only")
