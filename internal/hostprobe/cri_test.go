package hostprobe

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// fakeRuntime answers Version and Status as containerd does.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	networkReady bool
}

func (f *fakeRuntime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "containerd", RuntimeVersion: "v1.7.13", RuntimeApiVersion: "v1"}, nil
}

func (f *fakeRuntime) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	net := &runtimeapi.RuntimeCondition{Type: "NetworkReady", Status: f.networkReady}
	if !f.networkReady {
		net.Reason, net.Message = "NetworkPluginNotReady", "Network plugin returns error: cni plugin not initialized"
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: "RuntimeReady", Status: true}, net,
	}}}, nil
}

// serveCRI starts a gRPC server where a runtime the node trusts listens
// (testListener: a Unix socket of this process, or on Windows a pipe only
// SYSTEM and Administrators may open) and returns its endpoint.
func serveCRI(t *testing.T, srv runtimeapi.RuntimeServiceServer) string {
	t.Helper()
	lis, endpoint := testListener(t)
	serveOn(t, lis, srv)
	return endpoint
}

func serveOn(t *testing.T, lis net.Listener, srv runtimeapi.RuntimeServiceServer) {
	s := grpc.NewServer()
	if srv != nil {
		runtimeapi.RegisterRuntimeServiceServer(s, srv)
	}
	go s.Serve(lis)
	t.Cleanup(s.Stop)
}

func TestCRIStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := criStatus(ctx, serveCRI(t, &fakeRuntime{networkReady: false}), servertrust.OSHost())
	if err != nil {
		t.Fatal(err)
	}
	if st.RuntimeName != "containerd" || st.RuntimeVersion != "v1.7.13" || st.RuntimeAPIVersion != "v1" {
		t.Errorf("version facts %+v", st)
	}
	want := []CRICondition{{Type: "RuntimeReady", Status: true},
		{Type: "NetworkReady", Reason: "NetworkPluginNotReady", Message: "Network plugin returns error: cni plugin not initialized"}}
	if len(st.Conditions) != 2 || st.Conditions[0] != want[0] || st.Conditions[1] != want[1] {
		t.Errorf("conditions %+v, want %+v", st.Conditions, want)
	}
}

func TestCRIStatusWithoutV1(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A server without runtime.v1 answers Unimplemented, as containerd 1.5 does.
	_, err := criStatus(ctx, serveCRI(t, nil), servertrust.OSHost())
	if !errors.Is(err, ErrCRIv1Unsupported) {
		t.Errorf("got %v, want ErrCRIv1Unsupported", err)
	}
}

func TestCRIStatusNothingListening(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = criStatus(ctx, "tcp://"+addr, servertrust.OSHost())
	if err == nil || !strings.HasPrefix(err.Error(), "cannot connect: ") {
		t.Errorf("got %v, want a cannot-connect error", err)
	}
}

// countingRuntime counts the calls that reach it.
type countingRuntime struct {
	fakeRuntime
	calls int
}

func (c *countingRuntime) Version(ctx context.Context, r *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	c.calls++
	return c.fakeRuntime.Version(ctx, r)
}

// A runtime whose server the node does not trust is refused before any
// call is sent, and the refusal is not taken for "nothing answers".
func TestCRIStatusRefusesAServerItDoesNotTrust(t *testing.T) {
	srv := &countingRuntime{}
	endpoint := serveCRI(t, srv)
	var asked int
	other := servertrust.Host{GOOS: "linux", SelfUID: 0,
		Server: func(c net.Conn) (pipe.Server, error) {
			asked++
			return pipe.Server{PID: 6120, UID: 1000}, nil
		},
		Identify: func(int) (proc.Identity, error) {
			return proc.Identity{Account: "1000", Image: "/home/alice/fakecri"}, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := criStatus(ctx, endpoint, other)
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || strings.HasPrefix(err.Error(), "cannot connect") || !strings.Contains(err.Error(), "process 6120") {
		t.Errorf("got %v, want the refusal naming process 6120", err)
	}
	if asked != 1 || srv.calls != 0 {
		t.Errorf("the server was judged %d times and answered %d calls; want judged once and no call sent", asked, srv.calls)
	}
}

// A TCP endpoint's server cannot be identified, so it is refused, naming
// the address.
func TestCRIStatusRefusesATCPServer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, lis, &fakeRuntime{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = criStatus(ctx, "tcp://"+lis.Addr().String(), servertrust.OSHost())
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), lis.Addr().String()+" is served by a process that could not be identified") {
		t.Errorf("got %v, want a refusal of the unidentified TCP server", err)
	}
}

func TestCRIEndpoints(t *testing.T) {
	for endpoint, want := range map[string]string{
		"npipe://./pipe/containerd-containerd":       `\\.\pipe\containerd-containerd`,
		"npipe:////./pipe/containerd-containerd":     `\\.\pipe\containerd-containerd`,
		`npipe://\\.\pipe\containerd-containerd`:     `\\.\pipe\containerd-containerd`,
		"NPIPE://./pipe/dockershim":                  `\\.\pipe\dockershim`,
		"npipe://./containerd-containerd":            `error: npipe://./containerd-containerd is not a pipe address: write it as npipe://./pipe/containerd-containerd`,
		"/run/containerd/containerd.sock":            `error: "/run/containerd/containerd.sock" has no scheme: write it as npipe://./pipe/containerd-containerd`,
		"unix:///run/containerd/containerd.sock":     "dialer",
		"http://127.0.0.1:1":                         `error: scheme "http" of "http://127.0.0.1:1" is not supported: use npipe://, tcp:// or unix://`,
		"tcp://127.0.0.1:1":                          "dialer",
		"npipe://server1/pipe/containerd-containerd": `\\server1\pipe\containerd-containerd`,
	} {
		got := "dialer"
		if scheme, rest, _ := strings.Cut(endpoint, "://"); strings.EqualFold(scheme, "npipe") {
			p, err := pipePath(rest)
			got = p
			if err != nil {
				got = "error: " + err.Error()
			}
		} else if _, err := criDialer(endpoint, servertrust.Host{}); err != nil {
			got = "error: " + err.Error()
		}
		if got != want {
			t.Errorf("%s\n got: %s\nwant: %s", endpoint, got, want)
		}
	}
}
