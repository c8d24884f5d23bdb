package modules

import (
	"net"

	criutil "k8s.io/cri-client/pkg/util"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

// runtimeServerCheck is the CRI client's server check
// (criutil.ServerCheck, the hook of patches/0014): every connection the
// kubelet's runtime and image services, the image pre-pull and the
// metaserver open to the container runtime is judged by servertrust's
// Runtime rule before gRPC sends a call on it, a reconnection after a
// containerd restart included. A refused one fails the dial, which gRPC
// retries with its backoff, so the node goes on once containerd serves
// the pipe again.
func runtimeServerCheck(h servertrust.Host) func(protocol, addr string, c net.Conn) error {
	return func(protocol, addr string, c net.Conn) error {
		return h.Check(servertrust.Runtime, servertrust.DisplayAddress(protocol, addr), c)
	}
}

// installRuntimeCheck puts runtimeServerCheck in place; it must run
// before edged starts the kubelet.
func installRuntimeCheck() {
	criutil.ServerCheck = runtimeServerCheck(servertrust.OSHost())
}
