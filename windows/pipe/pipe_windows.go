//go:build windows

package pipe

import (
	"context"
	"net"
	"time"

	"github.com/Microsoft/go-winio"
)

// placeholderWait bounds the open that uses go-winio's placeholder
// instance up: on Windows it finds no listening instance and gives up.
const placeholderWait = 200 * time.Millisecond

// Listen serves the local pipe called name, admitting the clients the
// security descriptor sddl allows.
//
// go-winio keeps a first pipe instance that only reserves the name, and
// Windows keeps clients off it until Accept makes a real one. Wine 8
// connects the first client to it, where nobody answers, so that client
// (the kubelet server's first health check, a mapper) would hang for good.
// Opening and closing the pipe once before the first Accept uses the
// placeholder up under Wine; on Windows the open times out and changes
// nothing.
func Listen(name, sddl string) (net.Listener, error) {
	l, err := winio.ListenPipe(Path(name), &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), placeholderWait)
	defer cancel()
	if c, err := winio.DialPipeContext(ctx, Path(name)); err == nil {
		c.Close()
	}
	return l, nil
}

// Dial connects to the local pipe called name; the pipe's security
// descriptor decides whether this process may.
func Dial(ctx context.Context, name string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, Path(name))
}
