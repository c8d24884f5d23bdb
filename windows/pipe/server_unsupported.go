//go:build !windows && !linux

package pipe

import (
	"fmt"
	"net"
	"runtime"
)

// ServerOf fails: this system's peer credentials are not read.
func ServerOf(c net.Conn) (Server, error) {
	return Server{}, fmt.Errorf("the server of a %s connection cannot be identified on %s", c.RemoteAddr().Network(), runtime.GOOS)
}
