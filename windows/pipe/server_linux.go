package pipe

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// ServerOf reads the peer of a Unix socket connection (SO_PEERCRED): the
// process and user that accepted it, as the kernel recorded them when the
// server called listen.
func ServerOf(c net.Conn) (Server, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Server{}, fmt.Errorf("a %s connection has no peer credentials: only a Unix socket's server can be identified", c.RemoteAddr().Network())
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Server{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Server{}, err
	}
	if credErr != nil {
		return Server{}, fmt.Errorf("reading the peer credentials (SO_PEERCRED): %w", credErr)
	}
	return Server{PID: int(cred.Pid), UID: int(cred.Uid)}, nil
}
