//go:build windows

package pipe

import (
	"context"
	"net"

	"github.com/Microsoft/go-winio"
)

// Listen serves the local pipe called name, admitting the clients the
// security descriptor sddl allows.
func Listen(name, sddl string) (net.Listener, error) {
	return winio.ListenPipe(Path(name), &winio.PipeConfig{SecurityDescriptor: sddl})
}

// Dial connects to the local pipe called name; the pipe's security
// descriptor decides whether this process may.
func Dial(ctx context.Context, name string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, Path(name))
}
