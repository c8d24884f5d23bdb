package modules

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	criutil "k8s.io/cri-client/pkg/util"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// Through the hook of patches/0014: the dialer the kubelet, the pre-pull
// and the metaserver get from the CRI client checks each connection's
// server, refuses (and closes) one servertrust refuses, and hands over one
// it trusts. The endpoint is a Unix socket this test serves, so on Linux
// the host's own peer credentials trust it; the refusal comes from a host
// whose facts say another user serves it.
func TestRuntimeDialsCheckTheServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	closed := make(chan bool, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_, err := c.Read(make([]byte, 1))
				closed <- err != nil
				c.Close()
			}()
		}
	}()
	save := criutil.ServerCheck
	t.Cleanup(func() { criutil.ServerCheck = save })

	var asked []string
	other := servertrust.Host{GOOS: "linux", SelfUID: 0,
		Server: func(c net.Conn) (pipe.Server, error) {
			asked = append(asked, "server")
			return pipe.Server{PID: 6120, UID: 1000}, nil
		},
		Identify: func(pid int) (proc.Identity, error) {
			return proc.Identity{Account: "1000", Image: "/home/alice/fakecri"}, nil
		},
	}
	criutil.ServerCheck = runtimeServerCheck(other)
	addr, dial, err := criutil.GetAddressAndDialer("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(context.Background(), addr)
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "socket "+sock+" is served by process 6120") {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial through the CRI client: %v, want the refusal naming the socket and process 6120", err)
	}
	if !<-closed {
		t.Error("the refused connection was left open")
	}
	if len(asked) != 1 {
		t.Errorf("the server was asked for %d times, want once per connection", len(asked))
	}

	criutil.ServerCheck = runtimeServerCheck(servertrust.OSHost())
	c, err = dial(context.Background(), addr)
	if err != nil {
		t.Fatalf("a runtime this process serves as its own user was refused: %v", err)
	}
	c.Close()
}
