package modules

import (
	"context"
	"sync"
	"time"

	"k8s.io/component-base/featuregate"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"

	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/clients/wsclient"

	"github.com/kubeedge-windows/edgecore/internal/reconnect"
)

var hubOnce sync.Once

// installHubReconnect sets edgeHub's hooks (patches/0012) so that the node
// is back within a second or two of cloudcore answering, without the
// nodes of a cloud coming back all at once: each wait before an attempt
// is reconnect's backoff for the hub's heartbeat (at most 1.5 s by
// default, jittered), each round is a single attempt (the backoff is the
// only pacing), and the node's Lease is renewed as soon as the hub
// connects (leaseKeeper). node is the node's name, leaseSeconds the
// kubelet's nodeLeaseDurationSeconds.
func installHubReconnect(heartbeat time.Duration, node string, leaseSeconds int32) {
	hubOnce.Do(func() {
		edgehub.ReconnectWait = reconnect.ForHeartbeat(heartbeat).Next
		wsclient.ConnectAttempts = 1
		wsclient.ConnectRetryWait = 0
		keeper := newLeaseKeeper(node, leaseSeconds)
		edgehub.ConnectionChanged = keeper.connected
		run := edged.DefaultRunLiteKubelet
		edged.DefaultRunLiteKubelet = func(ctx context.Context, s *kubeletoptions.KubeletServer, deps *kubelet.Dependencies, fg featuregate.FeatureGate) error {
			if deps != nil && deps.HeartbeatClient != nil {
				deps.HeartbeatClient = keeper.wrap(deps.HeartbeatClient)
			}
			return run(ctx, s, deps, fg)
		}
	})
}
