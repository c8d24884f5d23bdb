package modules

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate"

	"github.com/kubeedge-windows/edgecore/internal/reconnect"
)

// fakeCertPort is cloudcore's certificate port: the CA at /ca.crt and a
// node certificate, signed by it, for the CSR posted to /edge.crt.
type fakeCertPort struct {
	caDER  []byte
	caKey  *ecdsa.PrivateKey
	ca     *x509.Certificate
	server *http.Server
}

func newFakeCertPort(t *testing.T) *fakeCertPort {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "KubeEdge"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return &fakeCertPort{caDER: der, caKey: key, ca: ca}
}

// token is a join token whose CA hash is this port's CA.
func (f *fakeCertPort) token() string {
	h := sha256.Sum256(f.caDER)
	return hex.EncodeToString(h[:]) + ".eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9.c2ln"
}

func (f *fakeCertPort) sign(t *testing.T, pub any, cn string, ip net.IP, usage x509.ExtKeyUsage) []byte {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		IPAddresses: []net.IP{ip}, ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.ca, pub, f.caKey)
	if err != nil {
		t.Error(err)
	}
	return der
}

// serve starts answering on l.
func (f *fakeCertPort) serve(t *testing.T, l net.Listener) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serverCert := tls.Certificate{Certificate: [][]byte{f.sign(t, &key.PublicKey, "cloudcore", net.ParseIP("127.0.0.1"), x509.ExtKeyUsageServerAuth)}, PrivateKey: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/ca.crt", func(w http.ResponseWriter, _ *http.Request) { w.Write(f.caDER) })
	mux.HandleFunc("/edge.crt", func(w http.ResponseWriter, r *http.Request) {
		// The CSR comes as DER, as cloudcore takes it.
		body, _ := io.ReadAll(r.Body)
		csr, err := x509.ParseCertificateRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(f.sign(t, csr.PublicKey, csr.Subject.CommonName, net.ParseIP("127.0.0.1"), x509.ExtKeyUsageClientAuth))
	})
	f.server = &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{serverCert}}}
	go f.server.ServeTLS(l, "", "")
	t.Cleanup(func() { f.server.Close() })
}

// A first start before cloudcore answers: upstream's certificate manager
// (patched, patches/0012) asks the node's hook after each failure; the
// hook says why once, records it for `service status`, waits with the
// reconnect backoff and tries again, and the node gets its certificates
// once the certificate port answers, without a panic.
func TestFirstStartWaitsForTheCloudsCertificates(t *testing.T) {
	orig := certificate.ApplyFailed
	defer func() { certificate.ApplyFailed = orig }()
	dir := t.TempDir()
	port := newFakeCertPort(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // closed: the cloud is not there yet

	statusFile := filepath.Join(dir, reconnect.StatusFile)
	status := &hubStatus{path: statusFile, pid: 4242, write: writeFile, now: time.Now}
	var mu sync.Mutex
	var failures []string
	done := make(chan struct{})
	w := &certWait{wait: func(time.Duration) time.Duration { return 20 * time.Millisecond }, done: done, status: status,
		token: port.token(), sleep: sleepOrDone}
	certificate.ApplyFailed = func(err error) bool {
		mu.Lock()
		failures = append(failures, err.Error())
		n := len(failures)
		mu.Unlock()
		if n == 3 {
			// The cloud comes: its certificate port answers.
			s, ok, rerr := reconnect.ReadStatus(os.ReadFile, statusFile)
			if rerr != nil || !ok || s.Connected || !strings.Contains(s.Waiting, "cloudcore's certificate port does not answer") {
				t.Errorf("while waiting, the status file holds %+v (%v)", s, rerr)
			}
			l2, lerr := net.Listen("tcp", addr)
			if lerr != nil {
				t.Errorf("reopen %s: %v", addr, lerr)
				return false
			}
			port.serve(t, l2)
		}
		return w.failed(err)
	}
	hub := v1alpha2.EdgeHub{HTTPServer: "https://" + addr, Token: port.token(),
		TLSCAFile: filepath.Join(dir, "ca", "rootCA.crt"), TLSCertFile: filepath.Join(dir, "certs", "server.crt"), TLSPrivateKeyFile: filepath.Join(dir, "certs", "server.key")}
	for _, d := range []string{"ca", "certs"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	cm := certificate.NewCertManager(hub, "win-1")
	started := make(chan any, 1)
	go func() {
		defer func() { started <- recover() }()
		cm.Start()
	}()
	select {
	case p := <-started:
		if p != nil {
			t.Fatalf("the certificate manager panicked: %v", p)
		}
	case <-time.After(time.Minute):
		close(done)
		t.Fatal("no certificates within a minute of the cloud answering")
	}
	select {
	case <-certificate.CleanupTokenChan:
	default:
		t.Error("the certificate manager did not signal that the token may go")
	}
	if _, err := tls.LoadX509KeyPair(hub.TLSCertFile, hub.TLSPrivateKeyFile); err != nil {
		t.Fatalf("the node's certificate: %v", err)
	}
	if len(failures) < 3 {
		t.Fatalf("%d failures before the cloud answered", len(failures))
	}
	for _, f := range failures {
		if strings.Contains(f, port.token()) {
			t.Errorf("a failure quotes the token: %s", f)
		}
	}
	w.connected(true)
	status.record(true, "")
	if s, ok, err := reconnect.ReadStatus(os.ReadFile, statusFile); !ok || !s.Connected || s.PID != 4242 {
		t.Errorf("once connected the status file holds %+v (%v)", s, err)
	}
}

// A refused token or another cloud's CA will not pass by waiting: the hook
// gives up at once, and upstream's certificate manager panics as before
// (join reads that and names the fix). A node that stops while it waits
// stops waiting.
func TestCertWaitGivesUpOnWhatWaitingCannotMend(t *testing.T) {
	slept := 0
	w := &certWait{wait: func(time.Duration) time.Duration { return time.Hour }, done: make(chan struct{}),
		sleep: func(time.Duration, <-chan struct{}) bool { slept++; return true }}
	for _, msg := range []string{
		"failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure",
		"failed to validate CA certificate. tokenCAhash: 3f6e2b1c, CAhash: 9a1f00aa",
		"token x credentials are in the wrong format",
	} {
		if w.failed(errors.New(msg)) {
			t.Errorf("%q: tries again", msg)
		}
	}
	if slept != 0 {
		t.Errorf("waited %d times before giving up", slept)
	}
	done := make(chan struct{})
	close(done)
	w = &certWait{wait: func(time.Duration) time.Duration { return time.Hour }, done: done, sleep: sleepOrDone}
	begin := time.Now()
	if w.failed(errors.New(`failed to get CA certificate, err: dial tcp 127.0.0.1:1: connect: connection refused`)) {
		t.Error("a stopping node tries again")
	}
	if time.Since(begin) > 5*time.Second {
		t.Error("a stopping node waited out the backoff")
	}
}

// The reason is logged once for each new reason, not once an attempt.
func TestCertWaitSaysWhyOnce(t *testing.T) {
	var logged []string
	var mu sync.Mutex
	klog.SetLogger(funcr.New(func(prefix, args string) { mu.Lock(); logged = append(logged, args); mu.Unlock() }, funcr.Options{}))
	defer klog.ClearLogger()
	w := &certWait{wait: func(time.Duration) time.Duration { return 0 }, done: make(chan struct{}),
		sleep: func(time.Duration, <-chan struct{}) bool { return true }}
	refused := errors.New(`failed to get CA certificate, err: dial tcp 127.0.0.1:1: connect: connection refused`)
	empty := errors.New("failed to validate CA certificate. tokenCAhash: 3f6e, CAhash: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	for _, err := range []error{refused, refused, refused, empty, empty} {
		if !w.failed(err) {
			t.Fatalf("%v: gave up", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, l := range logged {
		if strings.Contains(l, "Waiting for cloudcore to issue the node's certificates") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("logged the wait %d times for two reasons over five attempts:\n%s", n, strings.Join(logged, "\n"))
	}
}

// A node without its certificate starts its kubelet only once the hub
// has connected (the kubelet could not register the node and would end
// the process after about 30 s); a node that has one starts it at once;
// a node that stops first does not start it.
func TestTheKubeletOfANeverConnectedNodeWaitsForTheFirstConnection(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "server.crt")
	f := newFirstConnection(cert)
	started := make(chan bool, 1)
	go func() { started <- f.wait(context.Background()) }()
	select {
	case <-started:
		t.Fatal("the kubelet started before the first connection")
	case <-time.After(100 * time.Millisecond):
	}
	f.connected(false)
	f.connected(true)
	if !<-started {
		t.Fatal("the kubelet did not start at the first connection")
	}
	f.connected(true) // later connections change nothing

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if newFirstConnection(cert).wait(ctx) {
		t.Error("a node that stopped before connecting started its kubelet")
	}
	if err := os.WriteFile(cert, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !newFirstConnection(cert).wait(ctx) {
		t.Error("a node with its certificate held its kubelet back")
	}
}
