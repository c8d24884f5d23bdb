package hostprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

// ErrCRIv1Unsupported is returned by the CRI probe when the runtime answers
// but does not serve CRI v1, which edged speaks.
var ErrCRIv1Unsupported = errors.New("the runtime does not serve CRI v1 (runtime.v1.RuntimeService)")

// CRIStatus is what the runtime answered.
type CRIStatus struct {
	RuntimeName       string
	RuntimeVersion    string
	RuntimeAPIVersion string
	Conditions        []CRICondition
}

// CRICondition is one of the runtime's Status conditions, e.g.
// RuntimeReady or NetworkReady.
type CRICondition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// criStatus is the CRI probe: Version, then Status, over one connection
// whose server trust judges first (servertrust's Runtime rule): join,
// preflight, the node's wait for its runtime and the upgrade's runtime
// check all ask through it.
func criStatus(ctx context.Context, endpoint string, trust servertrust.Host) (CRIStatus, error) {
	conn, err := dialCRI(ctx, endpoint, trust)
	if err != nil {
		return CRIStatus{}, err
	}
	defer conn.Close()
	client := runtimeapi.NewRuntimeServiceClient(conn)
	v, err := client.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
	if status.Code(err) == codes.Unimplemented {
		return CRIStatus{}, ErrCRIv1Unsupported
	}
	if err != nil {
		return CRIStatus{}, fmt.Errorf("runtime Version call: %w", err)
	}
	st, err := client.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return CRIStatus{}, fmt.Errorf("runtime Status call: %w", err)
	}
	out := CRIStatus{RuntimeName: v.RuntimeName, RuntimeVersion: v.RuntimeVersion, RuntimeAPIVersion: v.RuntimeApiVersion}
	if st.Status != nil {
		for _, c := range st.Status.Conditions {
			out.Conditions = append(out.Conditions, CRICondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return out, nil
}

// criDialer understands the endpoint forms edged accepts on Windows:
// npipe://./pipe/name (also with four slashes) and tcp://host:port. Each
// connection it makes is judged by trust's Runtime rule, and one whose
// server is refused is closed and the *servertrust.RefusedError returned.
func criDialer(endpoint string, trust servertrust.Host) (func(context.Context) (net.Conn, error), error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(endpoint), "://")
	if !ok {
		return nil, fmt.Errorf("%q has no scheme: write it as npipe://./pipe/containerd-containerd", endpoint)
	}
	switch strings.ToLower(scheme) {
	case "npipe":
		path, err := pipePath(rest)
		if err != nil {
			return nil, err
		}
		return trust.Dialer(servertrust.Runtime, path, func(ctx context.Context) (net.Conn, error) { return dialPipe(ctx, path) }), nil
	case "tcp", "unix":
		// unix:// is the Linux build's endpoint (and AF_UNIX exists on
		// Windows too); the path follows the scheme as is.
		network := strings.ToLower(scheme)
		return trust.Dialer(servertrust.Runtime, rest, func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, rest)
		}), nil
	}
	return nil, fmt.Errorf("scheme %q of %q is not supported: use npipe://, tcp:// or unix://", scheme, endpoint)
}

// pipePath turns "./pipe/containerd-containerd" or "//./pipe/..." into the
// Windows pipe name \\.\pipe\containerd-containerd.
func pipePath(rest string) (string, error) {
	rest = strings.TrimLeft(strings.ReplaceAll(rest, `\`, "/"), "/")
	host, name, ok := strings.Cut(rest, "/pipe/")
	if !ok || host == "" || name == "" {
		return "", fmt.Errorf("npipe://%s is not a pipe address: write it as npipe://./pipe/containerd-containerd", rest)
	}
	return `\\` + host + `\pipe\` + strings.ReplaceAll(name, "/", `\`), nil
}

// ContainerdAddress is the address containerd's own API listens on for
// the CRI endpoint it serves (the same gRPC server answers both): the pipe
// \\.\pipe\containerd-containerd for npipe://./pipe/containerd-containerd,
// the socket path for unix:///run/containerd/containerd.sock.
func ContainerdAddress(endpoint string) (string, error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(endpoint), "://")
	if !ok {
		return "", fmt.Errorf("%q has no scheme: write it as npipe://./pipe/containerd-containerd", endpoint)
	}
	switch strings.ToLower(scheme) {
	case "npipe":
		return pipePath(rest)
	case "unix":
		return rest, nil
	}
	return "", fmt.Errorf("scheme %q of %q is not containerd's: containerd listens on npipe:// (Windows) or unix:// (Linux)", scheme, endpoint)
}

// dialCRI connects to the runtime at endpoint, once trust has judged its
// server.
func dialCRI(ctx context.Context, endpoint string, trust servertrust.Host) (*grpc.ClientConn, error) {
	dial, err := criDialer(endpoint, trust)
	if err != nil {
		return nil, err
	}
	// Dialling first gives "cannot connect" its own error, rather than a
	// gRPC Unavailable that hides whether containerd answered at all. A
	// refused server is not "cannot connect": it answered, and is not
	// trusted.
	first, err := dial(ctx)
	var refused *servertrust.RefusedError
	if errors.As(err, &refused) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	pre := make(chan net.Conn, 1)
	pre <- first
	conn, err := grpc.NewClient("passthrough:///cri",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			select {
			case c := <-pre:
				return c, nil
			default:
				return dial(ctx)
			}
		}))
	if err != nil {
		first.Close()
		return nil, err
	}
	return conn, nil
}

// CRIImagePresent asks the runtime at endpoint whether it holds image
// (CRI ImageStatus): what the kubelet asks before it pulls. The runtime's
// server is judged first, as for every CRI call.
func CRIImagePresent(ctx context.Context, endpoint, image string) (bool, error) {
	conn, err := dialCRI(ctx, endpoint, servertrust.OSHost())
	if err != nil {
		return false, err
	}
	defer conn.Close()
	resp, err := runtimeapi.NewImageServiceClient(conn).ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return false, fmt.Errorf("runtime ImageStatus call: %w", err)
	}
	return resp.Image != nil, nil
}
