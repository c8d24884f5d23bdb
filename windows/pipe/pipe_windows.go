//go:build windows

package pipe

import (
	"net"

	"github.com/Microsoft/go-winio"
)

// Listen serves the local pipe called name, admitting the clients the
// security descriptor sddl allows.
func Listen(name, sddl string) (net.Listener, error) {
	return winio.ListenPipe(Path(name), &winio.PipeConfig{SecurityDescriptor: sddl})
}
