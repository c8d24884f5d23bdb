//go:build !windows

package pipe

import (
	"context"
	"fmt"
	"net"
)

// Listen fails: named pipes exist only on Windows.
func Listen(name, _ string) (net.Listener, error) {
	return nil, fmt.Errorf("cannot serve %s: named pipes exist only on Windows; use a socket path here", Path(name))
}

// Dial fails: named pipes exist only on Windows.
func Dial(_ context.Context, name string) (net.Conn, error) {
	return nil, fmt.Errorf("cannot connect to %s: named pipes exist only on Windows", Path(name))
}
