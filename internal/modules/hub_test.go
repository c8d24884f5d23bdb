package modules

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"

	"github.com/kubeedge/beehive/pkg/core/model"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/clients/wsclient"
	"github.com/kubeedge/kubeedge/pkg/viaduct/pkg/api"
	"github.com/kubeedge/kubeedge/pkg/viaduct/pkg/conn"
)

// installHubReconnect fills patches/0012's hooks: one attempt a round,
// waits from the backoff for the heartbeat, and the kubelet's heartbeat
// client wrapped so that a connection renews the node's Lease. This test
// compiles only against the patched upstream.
func TestHubReconnectHooks(t *testing.T) {
	origWait, origChanged, origRun := edgehub.ReconnectWait, edgehub.ConnectionChanged, edged.DefaultRunLiteKubelet
	origAttempts, origRetry := wsclient.ConnectAttempts, wsclient.ConnectRetryWait
	origApply, origExit := certificate.ApplyFailed, klog.OsExit
	defer func() {
		edgehub.ReconnectWait, edgehub.ConnectionChanged, edged.DefaultRunLiteKubelet = origWait, origChanged, origRun
		wsclient.ConnectAttempts, wsclient.ConnectRetryWait = origAttempts, origRetry
		certificate.ApplyFailed, klog.OsExit = origApply, origExit
	}()
	var deps *kubelet.Dependencies
	edged.DefaultRunLiteKubelet = func(_ context.Context, _ *kubeletoptions.KubeletServer, d *kubelet.Dependencies, _ featuregate.FeatureGate) error {
		deps = d
		return nil
	}
	installHubReconnect(hubOptions{heartbeat: 15 * time.Second, node: "win-1", leaseSeconds: 40})
	if certificate.ApplyFailed(errors.New(`failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure`)) {
		t.Error("the certificate hook tries a refused token again")
	}

	if wsclient.ConnectAttempts != 1 || wsclient.ConnectRetryWait != 0 {
		t.Errorf("a round makes %d attempts %v apart, want 1", wsclient.ConnectAttempts, wsclient.ConnectRetryWait)
	}
	for i := 0; i < 100; i++ {
		if w := edgehub.ReconnectWait(time.Hour); w >= 1500*time.Millisecond {
			t.Fatalf("wait after a connection that held: %v, want under 1.5 s", w)
		}
		if w := edgehub.ReconnectWait(0); w < 125*time.Millisecond || w >= 1500*time.Millisecond {
			t.Fatalf("wait after a failed attempt: %v, want in [125ms, 1.5s)", w)
		}
	}

	f := newLeaseFixture(t)
	edged.DefaultRunLiteKubelet(context.Background(), nil,
		&kubelet.Dependencies{HeartbeatClient: fixtureClient{Clientset: fake.NewSimpleClientset(), cloud: f.cloud}}, nil)
	if deps == nil {
		t.Fatal("the kubelet was not run")
	}
	leases := deps.HeartbeatClient.CoordinationV1().Leases(v1.NamespaceNodeLease)
	if _, err := leases.Get(context.Background(), "win-1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	edgehub.ConnectionChanged(false)
	edgehub.ConnectionChanged(true)
	deadline := time.Now().Add(10 * time.Second)
	for len(f.cloud.accepted()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.cloud.accepted(); len(got) != 1 {
		t.Fatalf("after the hub connected the cloud accepted %d Lease renewals, want 1", len(got))
	}
}

// edgeHub learns that the connection broke from the reader it waits on:
// with patches/0012 a failed read of viaduct's websocket connection ends
// ReadMessage at once (upstream left it waiting, and edgeHub noticed only
// at its next write, up to a heartbeat later).
func TestBrokenWebsocketEndsReadMessage(t *testing.T) {
	closeIt := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		<-closeIt
		c.Close()
	}))
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := conn.NewWSConn(&conn.ConnectionOptions{
		ConnType: api.ProtocolTypeWS, Base: ws, ConnUse: api.UseTypeMessage,
		State: &conn.ConnectionState{Headers: http.Header{}},
	})
	c.ServeConn()
	read := make(chan error, 1)
	go func() {
		var m model.Message
		read <- c.ReadMessage(&m)
	}()
	close(closeIt)
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("ReadMessage returned no error from a closed connection")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadMessage still waits on a connection the cloud closed")
	}
}
