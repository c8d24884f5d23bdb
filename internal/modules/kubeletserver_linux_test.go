//go:build linux

package modules

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/kubeedge/pkg/stream"
	kubeletserver "k8s.io/kubernetes/pkg/kubelet/server"

	"github.com/kubeedge-windows/edgecore/config"
)

// Through the hooks of patches/0010 and 0011: the kubelet's read-only
// server listens through ReadOnlyListen, and stream's client (logs,
// metrics, edged's health check) reaches it through DialEdged. On Linux the
// socket lies in a folder only root may enter, and nothing listens on the
// TCP address. Built for Linux only: the Windows node's kubelet server is
// the pipe of TestWindowsKubeletServerIsAnAdministratorsOnlyPipe.
func TestKubeletServerHooksServeAPrivateSocket(t *testing.T) {
	dir := t.TempDir()
	cfg := &v1alpha2.EdgeCoreConfig{DataBase: &v1alpha2.DataBase{DataSource: filepath.Join(dir, "edgecore.db")}}
	ep := config.KubeletServerOf(cfg, "linux")
	saveListen, saveDial := kubeletserver.ReadOnlyListen, stream.DialEdged
	t.Cleanup(func() { kubeletserver.ReadOnlyListen, stream.DialEdged = saveListen, saveDial })
	installKubeletServer(ep)

	l, err := kubeletserver.ReadOnlyListen("127.0.0.1:10350")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "served "+req.URL.Path) }))

	for p, want := range map[string]os.FileMode{ep.SocketDir: 0o700, ep.Socket: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v, want %v", p, got, want)
		}
	}
	resp, err := stream.EdgedHTTPClient().Get("http://127.0.0.1:10350/healthz/syncloop")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "served /healthz/syncloop" {
		t.Errorf("the kubelet server answered %q", body)
	}
}
