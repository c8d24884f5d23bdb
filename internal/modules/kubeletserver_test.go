package modules

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	kubeletserver "k8s.io/kubernetes/pkg/kubelet/server"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge/kubeedge/pkg/stream"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// recordingPipes stands in for windows/pipe: it records the pipes opened
// and the descriptor handed to the Windows API, and serves them over an
// in-memory connection.
type recordingPipes struct {
	listened, dialled, checked []string
	sddl                       string
	l                          net.Listener
	// refuse is what the server check answers.
	refuse error
}

func (r *recordingPipes) io() pipeIO {
	return pipeIO{
		listen: func(name, sddl string) (net.Listener, error) {
			r.listened = append(r.listened, name)
			r.sddl = sddl
			return r.l, nil
		},
		dial: func(ctx context.Context, name string) (net.Conn, error) {
			r.dialled = append(r.dialled, name)
			var d net.Dialer
			return d.DialContext(ctx, "tcp", r.l.Addr().String())
		},
		check: func(c net.Conn, address string) error {
			r.checked = append(r.checked, address)
			return r.refuse
		},
	}
}

// On Windows the kubelet server is a pipe only SYSTEM and Administrators
// may open, and every request edgeStream makes goes to that pipe, whatever
// host and port the cloud's URL names. Wine does not check a pipe's DACL,
// so this asserts the descriptor handed to the Windows API.
func TestWindowsKubeletServerIsAnAdministratorsOnlyPipe(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingPipes{l: inner}
	ep := config.KubeletServer{Pipe: config.KubeletServerPipe}
	up := newServerUp()
	l, err := kubeletServerListener(ep, r.io(), up)("127.0.0.1:10350")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(r.listened) != 1 || r.listened[0] != "edgecore-kubelet" {
		t.Fatalf("listened on pipes %q, want edgecore-kubelet", r.listened)
	}
	if r.sddl != acl.PipeSDDL {
		t.Errorf("the pipe's descriptor is %q, want the administrators-only %q", r.sddl, acl.PipeSDDL)
	}
	sec, err := acl.ParseSDDL("O:BA" + r.sddl)
	if err != nil {
		t.Fatal(err)
	}
	if others := sec.Others(""); len(others) != 0 {
		t.Errorf("the pipe admits others: %v", others)
	}

	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "served "+req.URL.Path) }))
	dial := kubeletServerDialer(ep, r.io(), up)
	// The cloud names a host; the request must go to the pipe regardless.
	for _, addr := range []string{"127.0.0.1:10350", "169.254.169.254:80"} {
		c, err := dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if len(r.dialled) != 2 || r.dialled[0] != "edgecore-kubelet" || r.dialled[1] != "edgecore-kubelet" {
		t.Errorf("dialled pipes %q, want edgecore-kubelet twice", r.dialled)
	}
	if len(r.checked) != 2 || r.checked[0] != `\\.\pipe\edgecore-kubelet` {
		t.Errorf(`server checks %q, want one per connection of \\.\pipe\edgecore-kubelet`, r.checked)
	}
	// A connection served by anyone but this process is closed and refused.
	r.refuse = errors.New("served by process 6120")
	if c, err := dial(context.Background(), "tcp", "127.0.0.1:10350"); err != r.refuse {
		if c != nil {
			c.Close()
		}
		t.Errorf("a refused server gave %v, want the refusal", err)
	}
}

// Through the hooks of patches/0010 and 0011: the kubelet's read-only
// server listens through ReadOnlyListen, and stream's client (logs,
// metrics, edged's health check) reaches it through DialEdged. On Linux the
// socket lies in a folder only root may enter, and nothing listens on the
// TCP address.
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

// Until the kubelet server listens, a dial waits for it rather than fail
// (edged's health check would log a failure every 50 ms), and gives up
// only when its context ends.
func TestDialsWaitForTheKubeletServer(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingPipes{l: inner}
	ep := config.KubeletServer{Pipe: config.KubeletServerPipe}
	up := newServerUp()
	dial := kubeletServerDialer(ep, r.io(), up)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := dial(ctx, "tcp", "127.0.0.1:10350"); err == nil || len(r.dialled) != 0 {
		t.Fatalf("a dial before the server listens: %v, dialled %v", err, r.dialled)
	}
	dialled := make(chan error, 1)
	go func() {
		c, err := dial(context.Background(), "tcp", "127.0.0.1:10350")
		if err == nil {
			c.Close()
		}
		dialled <- err
	}()
	select {
	case err := <-dialled:
		t.Fatalf("the dial returned before the server listened: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	l, err := kubeletServerListener(ep, r.io(), up)("127.0.0.1:10350")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := <-dialled; err != nil {
		t.Fatal(err)
	}
}
