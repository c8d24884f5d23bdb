//go:build !windows

package hostprobe

import (
	"context"
	"errors"
	"net"
	"runtime"
)

func dialPipe(context.Context, string) (net.Conn, error) {
	return nil, errors.New("named pipes are not supported on " + runtime.GOOS + ": use a tcp:// endpoint")
}
