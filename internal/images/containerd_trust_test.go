//go:build !windows

package images

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// images import connects to containerd only once its server is judged:
// a socket another user serves is refused at once, naming it, and no
// archive reaches it.
func TestContainerdRefusesAServerItDoesNotTrust(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	go s.Serve(l)
	defer s.Stop()
	judged := 0
	other := servertrust.Host{GOOS: "linux",
		Server: func(net.Conn) (pipe.Server, error) {
			judged++
			return pipe.Server{PID: 6120, UID: 1000}, nil
		},
		Identify: func(int) (proc.Identity, error) {
			return proc.Identity{Account: "1000", Image: "/home/alice/fakecri"}, nil
		},
	}
	start := time.Now()
	_, err = containerdWith("unix://"+sock, "overlayfs", other)(context.Background())
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), sock+" is served by process 6120") {
		t.Fatalf("got %v, want the refusal naming the socket and process 6120", err)
	}
	if took := time.Since(start); took > dialTimeout/2 {
		t.Errorf("the refusal took %v: it was retried until the time-out", took)
	}
	if judged == 0 {
		t.Error("the server was never judged")
	}
}
