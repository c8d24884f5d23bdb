//go:build !windows

package pipe

import (
	"fmt"
	"net"
)

// Listen fails: named pipes exist only on Windows.
func Listen(name, _ string) (net.Listener, error) {
	return nil, fmt.Errorf("cannot serve %s: named pipes exist only on Windows; use a socket path here", Path(name))
}
