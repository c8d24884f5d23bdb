//go:build windows

package pipe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// placeholderWait bounds the open that uses go-winio's placeholder
// instance up: on Windows it finds no listening instance and gives up.
const placeholderWait = 200 * time.Millisecond

// probeWait bounds the open that looks for a server already holding the
// name: a server whose instances are all busy is waited for this long.
const probeWait = time.Second

// Listen serves the local pipe called name, admitting the clients the
// security descriptor sddl allows. Every instance refuses remote clients
// (go-winio creates each with FILE_PIPE_REJECT_REMOTE_CLIENTS).
//
// A name another process holds already is refused with a *SquattedError
// naming that process: its first instance carries the access list its
// creator chose. Windows refuses to create the first instance of an
// existing pipe (go-winio asks for FILE_CREATE); Wine 8 does not, and
// would let both servers answer, so the name is probed first, and the
// instance that answers once the listener exists must be this process's.
//
// go-winio keeps a first pipe instance that only reserves the name, and
// Windows keeps clients off it until Accept makes a real one. Wine 8
// connects the first client to it, where nobody answers, so that client
// (the kubelet server's first health check, a mapper) would hang for good.
// Opening and closing the pipe once before the first Accept uses the
// placeholder up under Wine; on Windows the open times out and changes
// nothing.
func Listen(name, sddl string) (net.Listener, error) {
	path := Path(name)
	if err := held(path); err != nil {
		return nil, err
	}
	l, err := winio.ListenPipe(path, &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		// Created meanwhile by someone else: say who.
		if herr := held(path); herr != nil {
			return nil, herr
		}
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), placeholderWait)
	defer cancel()
	if c, err := winio.DialPipeContext(ctx, path); err == nil {
		s, serr := ServerOf(c)
		c.Close()
		if serr == nil && s.PID != 0 && s.PID != os.Getpid() {
			l.Close()
			return nil, &SquattedError{Pipe: path, PID: s.PID}
		}
	}
	return l, nil
}

// held returns a *SquattedError when a pipe called path exists, with its
// server's process id when an instance could be opened, nil when no pipe
// has the name.
func held(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeWait)
	defer cancel()
	c, err := winio.DialPipeAccess(ctx, path, windows.GENERIC_READ)
	switch {
	case err == nil:
		s, serr := ServerOf(c)
		c.Close()
		if serr != nil {
			return &SquattedError{Pipe: path, Why: serr.Error()}
		}
		return &SquattedError{Pipe: path, PID: s.PID}
	case errors.Is(err, windows.ERROR_FILE_NOT_FOUND), errors.Is(err, windows.ERROR_PATH_NOT_FOUND):
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, winio.ErrTimeout):
		return &SquattedError{Pipe: path, Why: fmt.Sprintf("every instance stayed busy for %v", probeWait)}
	}
	return &SquattedError{Pipe: path, Why: err.Error()}
}

// Dial connects to the local pipe called name; the pipe's security
// descriptor decides whether this process may. Who serves it is the
// caller's to check (ServerOf).
func Dial(ctx context.Context, name string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, Path(name))
}

// ServerOf tells who serves the named pipe connection c (one go-winio
// dialled): the server's process id for this very connection (another
// process allowed to add instances to the pipe would show as itself),
// and the pipe object's owner and DACL.
func ServerOf(c net.Conn) (Server, error) {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return Server{}, fmt.Errorf("a %s connection is not a named pipe: its server cannot be identified", c.RemoteAddr().Network())
	}
	h := windows.Handle(f.Fd())
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(h, &pid); err != nil {
		return Server{}, fmt.Errorf("reading the pipe's server process id (GetNamedPipeServerProcessId): %w", err)
	}
	s := Server{PID: int(pid), UID: -1}
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		s.SDDLErr = fmt.Sprintf("reading the pipe's owner and DACL (GetSecurityInfo): %v", err)
	} else {
		s.SDDL = sd.String()
	}
	return s, nil
}
