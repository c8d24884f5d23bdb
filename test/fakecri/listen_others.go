//go:build !windows

package fakecri

import (
	"errors"
	"net"
)

func listenPipe(string, string) (net.Listener, error) {
	return nil, errors.New("named pipes exist on Windows only; use tcp:// or unix://")
}
