package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/namespaces"
	"github.com/containerd/containerd/pkg/dialer"
	"github.com/distribution/reference"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

// Namespace is containerd's namespace of the kubelet's images (CRI's).
const Namespace = "k8s.io"

// Snapshotter is the snapshotter containerd's CRI plugin unpacks into by
// default on goos: "windows" on Windows, "overlayfs" elsewhere.
func Snapshotter(goos string) string {
	if goos == config.Windows {
		return "windows"
	}
	return "overlayfs"
}

// dialTimeout bounds connecting to containerd.
const dialTimeout = 10 * time.Second

// Containerd connects to the containerd that serves the CRI endpoint
// (modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint), through
// containerd's Go client, in the k8s.io namespace; images are unpacked
// into snapshotter. Each connection's server is judged first
// (servertrust's Runtime rule): an archive's images go only to the
// runtime the node trusts.
func Containerd(endpoint, snapshotter string) func(ctx context.Context) (Runtime, error) {
	return containerdWith(endpoint, snapshotter, servertrust.OSHost())
}

func containerdWith(endpoint, snapshotter string, trust servertrust.Host) func(ctx context.Context) (Runtime, error) {
	return func(ctx context.Context) (Runtime, error) {
		addr, err := hostprobe.ContainerdAddress(endpoint)
		if err != nil {
			return nil, fmt.Errorf("containerRuntimeEndpoint: %w", err)
		}
		c, err := containerd.New(addr, containerd.WithDefaultNamespace(Namespace), containerd.WithTimeout(dialTimeout),
			containerd.WithDialOpts(dialOptions(addr, trust)))
		var refused *servertrust.RefusedError
		if errors.As(err, &refused) {
			return nil, refused
		}
		if err != nil {
			return nil, fmt.Errorf("connecting to containerd at %s: %w; fix: start containerd (Start-Service containerd), or check containerRuntimeEndpoint", addr, err)
		}
		return &containerdRuntime{c: c, snapshotter: snapshotter}, nil
	}
}

// dialOptions are containerd's client's own (containerd.New), with its
// dialer wrapped so that a connection whose server trust refuses is
// closed, and the refusal ends the connect at once rather than being
// retried until the time-out.
func dialOptions(addr string, trust servertrust.Host) []grpc.DialOption {
	bo := backoff.DefaultConfig
	bo.MaxDelay = 3 * time.Second
	return []grpc.DialOption{
		grpc.WithBlock(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.FailOnNonTempDialError(true),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo}),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return trust.Dialer(servertrust.Runtime, addr, func(ctx context.Context) (net.Conn, error) {
				return dialer.ContextDialer(ctx, a)
			})(ctx)
		}),
		grpc.WithReturnConnectionError(),
	}
}

type containerdRuntime struct {
	c           *containerd.Client
	snapshotter string
}

func (r *containerdRuntime) ctx(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, Namespace)
}

// Import keeps the images of the host's platform that the archive names
// in full (docker save's repository tags, an OCI index's
// io.containerd.image.name or a reference name such as
// registry.k8s.io/pause:3.9); a bare tag, which names no repository, is
// left out.
func (r *containerdRuntime) Import(ctx context.Context, rd io.Reader) ([]string, error) {
	imgs, err := r.c.Import(r.ctx(ctx), rd, containerd.WithImageRefTranslator(fullName))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, img := range imgs {
		names = append(names, img.Name)
	}
	return names, nil
}

// fullName is ref in its normalised form (docker.io/library/busybox:1.36
// for busybox:1.36), or "" for a bare tag or what is no reference.
func fullName(ref string) string {
	if !strings.ContainsAny(ref, "/:@") {
		return ""
	}
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	return reference.TagNameOnly(named).String()
}

func (r *containerdRuntime) Unpack(ctx context.Context, name string) error {
	ctx = r.ctx(ctx)
	img, err := r.c.GetImage(ctx, name)
	if err != nil {
		return err
	}
	return img.Unpack(ctx, r.snapshotter)
}

func (r *containerdRuntime) Missing(ctx context.Context, names []string) ([]string, error) {
	ctx = r.ctx(ctx)
	var missing []string
	for _, n := range names {
		_, err := r.c.ImageService().Get(ctx, n)
		switch {
		case errdefs.IsNotFound(err):
			missing = append(missing, n)
		case err != nil:
			return nil, err
		}
	}
	return missing, nil
}

func (r *containerdRuntime) Close() error { return r.c.Close() }
