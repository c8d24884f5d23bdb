package modules

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/clients/wsclient"
	"github.com/kubeedge/kubeedge/edge/pkg/edgestream"

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
	// status records the connection's state for `service status`
	// (newHubStatus; nil for nowhere).
	status *hubStatus
	// certFile is the node's certificate (modules.edgeHub.tlsCertFile):
	// a node without one has never reached its cloud.
	certFile string
}

// installHubReconnect sets edgeHub's hooks (patches/0012) so that the
// node is back within a second or two of cloudcore answering, without the
// nodes of a cloud coming back all at once: each wait before an attempt
// is reconnect's backoff for the hub's heartbeat (at most 1.5 s by
// default, jittered), each round is a single attempt (the backoff is the
// only pacing), the node's Lease is renewed as soon as the hub connects
// (leaseKeeper), and a connection on which cloudcore no longer answers
// websocket pings is closed (reconnect.Liveness, patches/0017), and so is
// such a stream tunnel (patches/0019). A first
// start before cloudcore answers waits for the certificates with the same
// backoff (certWait), and the kubelet of such a node starts once the hub
// has connected (firstConnection). The connection's state goes to the
// status file.
func installHubReconnect(o hubOptions) {
	hubOnce.Do(func() {
		backoff := reconnect.ForHeartbeat(o.heartbeat)
		edgehub.ReconnectWait = backoff.Next
		wsclient.ConnectAttempts = 1
		wsclient.ConnectRetryWait = 0
		// A connection that stopped carrying anything ends within two
		// heartbeats rather than when TCP gives up (patches/0017).
		liveness := reconnect.LivenessForHeartbeat(o.heartbeat)
		liveness.Closed = func(silent time.Duration) {
			klog.InfoS("cloudcore has not answered on the hub's connection: closing it to connect again", "silentFor", silent.Round(time.Second))
		}
		wsclient.Connected = func(conn *websocket.Conn) { go liveness.Watch(conn) }
		// The stream tunnel (logs, exec, attach) is a connection of its
		// own that goes silent the same way (patches/0019); edgeStream
		// connects again within its 2 s tick once it is closed.
		tunnel := reconnect.LivenessForHeartbeat(o.heartbeat)
		tunnel.Closed = func(silent time.Duration) {
			klog.InfoS("cloudcore has not answered on the stream tunnel: closing it to connect again", "silentFor", silent.Round(time.Second))
		}
		edgestream.Connected = func(conn *websocket.Conn) { go tunnel.Watch(conn) }
		status := o.status
		status.record(false, "")
		certs := &certWait{wait: edgehub.ReconnectWait, done: beehiveContext.Done(), status: status, token: o.token, sleep: sleepOrDone}
		certificate.ApplyFailed = certs.failed
		keeper := newLeaseKeeper(o.node, o.leaseSeconds)
		first := newFirstConnection(o.certFile)
		edgehub.ConnectionChanged = func(up bool) {
			keeper.connected(up)
			certs.connected(up)
			first.connected(up)
			status.record(up, "")
		}
		run := edged.DefaultRunLiteKubelet
		edged.DefaultRunLiteKubelet = func(ctx context.Context, s *kubeletoptions.KubeletServer, deps *kubelet.Dependencies, fg featuregate.FeatureGate) error {
			if !first.wait(ctx) {
				return nil // the node stopped first
			}
			if deps != nil && deps.HeartbeatClient != nil {
				deps.HeartbeatClient = keeper.wrap(deps.HeartbeatClient)
			}
			return run(ctx, s, deps, fg)
		}
	})
}

// firstConnectionCert is the certificate whose absence holds the kubelet
// back until the first connection (firstConnection): the hub's, or ""
// (no wait) when edgeHub is off, since such a node never connects and
// runs its kubelet on its own (a node tested without a cloud, or one
// that only runs static pods).
func firstConnectionCert(hub *v1alpha2.EdgeHub) string {
	if hub == nil || !hub.Enable {
		return ""
	}
	return hub.TLSCertFile
}

// firstConnection holds back the kubelet of a node that has never reached
// its cloud (it has no certificate yet) until edgeHub first connects.
// Such a kubelet cannot register the node, and the kubelet's CSI plugin
// ends the process when the node is still unknown about 30 s after start
// ("Failed to initialize CSINode after retrying"): a first start without
// the cloud ended there, and as a service restarted into the same end.
// Once the node is connected it registers at once. A node that has its
// certificate starts its kubelet at once, cloud or not, as it knows
// itself from its database. edged's health check waits meanwhile on the
// kubelet server's listener (kubeletServerDialer), quietly.
type firstConnection struct {
	// done is closed at the first connection, at once for a node that
	// has its certificate.
	once sync.Once
	done chan struct{}
}

func newFirstConnection(certFile string) *firstConnection {
	f := &firstConnection{done: make(chan struct{})}
	if _, err := os.Stat(certFile); certFile == "" || !errors.Is(err, fs.ErrNotExist) {
		f.once.Do(func() { close(f.done) })
	}
	return f
}

func (f *firstConnection) connected(up bool) {
	if up {
		f.once.Do(func() { close(f.done) })
	}
}

// wait returns true once the kubelet may start, false when ctx ends
// first.
func (f *firstConnection) wait(ctx context.Context) bool {
	select {
	case <-f.done:
		return true
	default:
	}
	klog.InfoS("The kubelet starts once the node has reached cloudcore for the first time: before that it cannot register the node")
	select {
	case <-f.done:
		klog.InfoS("The node reached cloudcore: starting the kubelet")
		return true
	case <-ctx.Done():
		return false
	}
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
	next := reconnect.Status{PID: s.pid, Connected: connected, Since: s.now().UTC(), Waiting: waiting, Pods: s.last.Pods}
	if s.last.PID != 0 && s.last.Connected == connected {
		// A new reason for the same state: the state's age stays.
		next.Since = s.last.Since
	}
	s.save(next)
}

// recordPods records why the node cannot list its pods from the cloud
// ("" once it can), keeping the connection's state.
func (s *hubStatus) recordPods(problem string) {
	if s == nil || s.path == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.PID == 0 || s.last.Pods == problem {
		return
	}
	next := s.last
	next.Pods = problem
	s.save(next)
}

// save writes next and keeps it as the last status; a failure is logged
// once. The caller holds s.mu.
func (s *hubStatus) save(next reconnect.Status) {
	if err := s.write(s.path, next.Encode()); err != nil {
		if !s.warned {
			s.warned = true
			klog.ErrorS(err, "Cannot record the connection's state for `edgecore.exe service status`", "file", s.path)
		}
		return
	}
	s.last = next
}

// newHubStatus is the status of this process, recorded in path ("" for
// nowhere).
func newHubStatus(path string) *hubStatus {
	return &hubStatus{path: path, pid: os.Getpid(), write: writeFile, now: time.Now}
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
