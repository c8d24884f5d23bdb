package modules

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"

	"k8s.io/klog/v2"
	kubeletserver "k8s.io/kubernetes/pkg/kubelet/server"

	"github.com/kubeedge/kubeedge/pkg/stream"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
)

// pipeIO opens named pipes (windows/pipe on the host, a recording fake in
// tests), and judges who serves a connection dialled to the kubelet
// server (servertrust's Self rule on the host).
type pipeIO struct {
	listen func(name, sddl string) (net.Listener, error)
	dial   func(ctx context.Context, name string) (net.Conn, error)
	check  func(c net.Conn, address string) error
}

// kubeletServerListener is the kubelet read-only server's listener
// (kubeletserver.ReadOnlyListen, the hook of patches/0010): the server is
// served at ep, never on the TCP address the configuration spells, which
// upstream opens to every local account without authentication. On
// Windows that is a named pipe only SYSTEM and Administrators may open; on
// Linux a socket of mode 0600 in a folder of mode 0700, both root's.
func kubeletServerListener(ep config.KubeletServer, p pipeIO, up *serverUp) func(string) (net.Listener, error) {
	return func(tcpAddress string) (net.Listener, error) {
		var l net.Listener
		var err error
		if ep.Pipe != "" {
			l, err = p.listen(ep.Pipe, acl.PipeSDDL)
		} else {
			l, err = listenPrivateSocket(ep.SocketDir, ep.Socket)
		}
		if err != nil {
			return nil, fmt.Errorf("serving the kubelet server on %s: %w", ep, err)
		}
		klog.InfoS("The kubelet server listens where only administrators can connect, not on TCP", "endpoint", ep.String(), "notOn", tcpAddress)
		up.open()
		return l, nil
	}
}

// kubeletServerDialer is edgeStream's, edged's and the metaserver's dialer
// of the kubelet server (stream.DialEdged, the hook of patches/0011): every
// connection goes to ep, whatever address the request names, so a stream
// request from the cloud cannot be aimed at another host or port either;
// and it must be served by this process, so that a process that took the
// pipe's name first receives no request (exec's commands, logs).
// Until the server first listens a dial waits for it (or for ctx):
// edged's health check, which polls every 50 ms and logs each failure,
// would otherwise fill the log while the kubelet waits for the node's
// first connection (firstConnection).
func kubeletServerDialer(ep config.KubeletServer, p pipeIO, up *serverUp) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		select {
		case <-up.ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var c net.Conn
		var err error
		address := ep.Socket
		if ep.Pipe != "" {
			address = pipe.Path(ep.Pipe)
			c, err = p.dial(ctx, ep.Pipe)
		} else {
			var d net.Dialer
			c, err = d.DialContext(ctx, "unix", ep.Socket)
		}
		if err != nil {
			return nil, err
		}
		if err := p.check(c, address); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// listenPrivateSocket binds a Unix socket that only root can connect to:
// the folder is made (or put back) to 0700 before the socket exists, so
// no other account can reach it even in the moment before its own mode is
// set; a socket left by a node that died is removed first.
func listenPrivateSocket(dir, path string) (net.Listener, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// serverUp is closed once the kubelet server first listens.
type serverUp struct {
	once sync.Once
	ch   chan struct{}
}

func newServerUp() *serverUp { return &serverUp{ch: make(chan struct{})} }

func (u *serverUp) open() { u.once.Do(func() { close(u.ch) }) }

// installKubeletServer puts both hooks in place; it must run before edged
// starts the kubelet.
func installKubeletServer(ep config.KubeletServer) {
	trust := servertrust.OSHost()
	p := pipeIO{listen: pipe.Listen, dial: pipe.Dial,
		check: func(c net.Conn, address string) error { return trust.Check(servertrust.Self, address, c) }}
	up := newServerUp()
	kubeletserver.ReadOnlyListen = kubeletServerListener(ep, p, up)
	stream.DialEdged = kubeletServerDialer(ep, p, up)
}
