package modules

import (
	"context"
	"os"
	"sync"
	"time"

	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"

	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/clients/wsclient"

	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/reconnect"
)

var hubOnce sync.Once

// hubOptions are what the hub's hooks need of the node.
type hubOptions struct {
	// heartbeat is modules.edgeHub.heartbeat.
	heartbeat time.Duration
	// node is the node's name, leaseSeconds the kubelet's
	// nodeLeaseDurationSeconds.
	node         string
	leaseSeconds int32
	// token is the join token, never repeated in the log.
	token string
	// statusFile is where the connection's state is recorded for
	// `service status` (reconnect.StatusPath), "" for nowhere.
	statusFile string
}

// installHubReconnect sets edgeHub's hooks (patches/0012) so that the
// node is back within a second or two of cloudcore answering, without the
// nodes of a cloud coming back all at once: each wait before an attempt
// is reconnect's backoff for the hub's heartbeat (at most 1.5 s by
// default, jittered), each round is a single attempt (the backoff is the
// only pacing), and the node's Lease is renewed as soon as the hub
// connects (leaseKeeper). A first start before cloudcore answers waits
// for the certificates with the same backoff (certWait), and the
// connection's state goes to the status file. The kubelet's exit hook
// skips edged's container cleanup until the kubelet has a runtime
// (guardEdgedExit).
func installHubReconnect(o hubOptions) {
	hubOnce.Do(func() {
		backoff := reconnect.ForHeartbeat(o.heartbeat)
		edgehub.ReconnectWait = backoff.Next
		wsclient.ConnectAttempts = 1
		wsclient.ConnectRetryWait = 0
		status := &hubStatus{path: o.statusFile, pid: os.Getpid(), write: writeFile, now: time.Now}
		status.record(false, "")
		certs := &certWait{wait: edgehub.ReconnectWait, done: beehiveContext.Done(), status: status, token: o.token, sleep: sleepOrDone}
		certificate.ApplyFailed = certs.failed
		keeper := newLeaseKeeper(o.node, o.leaseSeconds)
		edgehub.ConnectionChanged = func(up bool) {
			keeper.connected(up)
			certs.connected(up)
			status.record(up, "")
		}
		nodeExit := klog.OsExit
		run := edged.DefaultRunLiteKubelet
		edged.DefaultRunLiteKubelet = func(ctx context.Context, s *kubeletoptions.KubeletServer, deps *kubelet.Dependencies, fg featuregate.FeatureGate) error {
			if deps != nil {
				guardEdgedExit(deps, nodeExit)
				if deps.HeartbeatClient != nil {
					deps.HeartbeatClient = keeper.wrap(deps.HeartbeatClient)
				}
			}
			return run(ctx, s, deps, fg)
		}
	})
}

// certWait is the node's answer to certificate.ApplyFailed (patches/0012):
// while the cloud may still answer (reconnect.CertFailure.Transient: the
// certificate port is closed, answers nothing or a server error), the
// node waits as edgeHub does between connections and tries again, and
// says why once for each new reason, in the log and the status file. A
// refused token or another cloud's CA ends the node as upstream does,
// for join or the operator to see. Upstream panics at the first failure,
// so that a node provisioned before its cloud is reachable crash-loops as
// a service.
type certWait struct {
	wait   func(lasted time.Duration) time.Duration
	done   <-chan struct{}
	status *hubStatus
	token  string
	// sleep waits d, or returns false once done is closed.
	sleep func(d time.Duration, done <-chan struct{}) bool

	mu       sync.Mutex
	said     reconnect.CertFailure
	attempts int
	since    time.Time
}

func (w *certWait) failed(err error) bool {
	cause := reconnect.ReadCertFailure(err.Error())
	if !cause.Transient() {
		return false
	}
	d := w.wait(0)
	w.mu.Lock()
	w.attempts++
	if w.since.IsZero() {
		w.since = time.Now()
	}
	newReason := cause != w.said
	w.said = cause
	w.mu.Unlock()
	if newReason {
		why := cause.String() + ": " + redact.String(err.Error(), w.token)
		// An error line, once: join quotes the last one when it times
		// out, and the service's log says why it is not connected
		// without a line every second.
		klog.ErrorS(nil, "Waiting for cloudcore to issue the node's certificates; trying again with the reconnect backoff until it answers",
			"reason", why)
		w.status.record(false, "waiting for the node's certificates: "+why)
	}
	return w.sleep(d, w.done)
}

// connected logs, once, that the wait for the certificates is over.
func (w *certWait) connected(up bool) {
	if !up {
		return
	}
	w.mu.Lock()
	n, since := w.attempts, w.since
	w.attempts, w.said = 0, reconnect.CertOther
	w.mu.Unlock()
	if n > 0 {
		klog.InfoS("Cloudcore answered: the node has its certificates and is connected", "failedAttempts", n, "waited", time.Since(since).Round(time.Second))
	}
}

func sleepOrDone(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}

// hubStatus writes the connection's state to the status file
// (reconnect.Status) when it changes.
type hubStatus struct {
	path  string
	pid   int
	write func(path string, data []byte) error
	now   func() time.Time

	mu     sync.Mutex
	last   reconnect.Status
	warned bool
}

func (s *hubStatus) record(connected bool, waiting string) {
	if s == nil || s.path == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.PID != 0 && s.last.Connected == connected && s.last.Waiting == waiting {
		return
	}
	next := reconnect.Status{PID: s.pid, Connected: connected, Since: s.now().UTC(), Waiting: waiting}
	if s.last.PID != 0 && s.last.Connected == connected {
		// A new reason for the same state: the state's age stays.
		next.Since = s.last.Since
	}
	if err := s.write(s.path, next.Encode()); err != nil {
		if !s.warned {
			s.warned = true
			klog.ErrorS(err, "Cannot record the connection's state for `edgecore.exe service status`", "file", s.path)
		}
		return
	}
	s.last = next
}

// writeFile replaces path as a whole: `service status` never reads half a
// status.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// guardEdgedExit wraps the exit hook edged's Start has just set
// (klog.OsExit: clean up the runtime's exited containers, then exit)
// around the kubelet edged is about to run with deps: until the kubelet
// has its runtime service, an exit goes straight to nodeExit, the node's
// own exit, as if edged had not started. Otherwise the cleanup reads the
// runtime service that is not there and panics over the reason the node
// is ending: a first start without the cloud showed the certificate
// manager's panic followed by a nil pointer in edged's cleanupContainers.
func guardEdgedExit(deps *kubelet.Dependencies, nodeExit func(int)) {
	edgedExit := klog.OsExit
	klog.OsExit = func(code int) {
		if deps.RemoteRuntimeService == nil {
			klog.InfoS("The kubelet has no container runtime yet: no containers to clean up before the node ends")
			klog.Flush()
			nodeExit(code)
			return
		}
		edgedExit(code)
	}
}
