package fakecri

import (
	"context"
	"net"
	"time"

	"github.com/Microsoft/go-winio"
)

// listenPipe serves the named pipe path (\\.\pipe\NAME) with the
// descriptor sddl (go-winio's default for "").
//
// go-winio keeps a first pipe instance that only reserves the name; Windows
// keeps clients off it until a real instance listens. Wine 8 treats it as
// listening, so the first client (the kubelet) connects to an instance
// nobody serves and its gRPC handshake hangs ("failed to write client
// preface"). Opening and closing the pipe once, before the first Accept
// creates a real instance, uses that placeholder up under Wine; on Windows
// the open finds no listening instance, times out and changes nothing.
func listenPipe(path, sddl string) (net.Listener, error) {
	l, err := winio.ListenPipe(path, &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if c, err := winio.DialPipeContext(ctx, path); err == nil {
		c.Close()
	}
	return l, nil
}
