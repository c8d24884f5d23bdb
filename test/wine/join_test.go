//go:build wine

package wine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// standInCloud serves what edgehub asks cloudcore for when it joins: the CA
// certificate on the certificate port, and a refusal of the join token.
// A TCP listener stands in for the hub port. The token's CA hash matches
// the CA, so the refusal is about the token itself.
func standInCloud(t *testing.T) (hub, certPort, token string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stand-in cloudcore"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/ca.crt":
				w.Write(der)
			case "/edge.crt":
				http.Error(w, "token validation failure", http.StatusUnauthorized)
			default:
				http.NotFound(w, r)
			}
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
	}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })

	sum := sha256.Sum256(der)
	token = hex.EncodeToString(sum[:]) + ".eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c3RhbmRpbg"
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return listen(t), port, token
}

// join --dry-run lists the steps and changes nothing; a join whose token
// the cloud refuses names the cause and the fix, and rolls back: no
// service, no configuration, no token left on disk.
func TestJoin(t *testing.T) {
	prefixC := filepath.Join(os.Getenv("WINEPREFIX"), "drive_c")
	cfg := filepath.Join(prefixC, "etc", "kubeedge", "config", "edgecore.yaml")
	if _, err := os.Stat(cfg); err == nil {
		t.Fatalf("%s exists before the test; run edgecore.exe reset --force in this prefix", cfg)
	}
	hub, certPort, token := standInCloud(t)
	// --stream=false: the stand-in has no tunnel on the fixed port 10004.
	args := []string{"join", "-e", hub, "-s", certPort, "-t", token, "-i", "wine-node", "--stream=false",
		// Without a container runtime the kubelet would end edgecore before
		// edgehub has asked for its certificates.
		"--set", "modules.edged.enable=false", "--set", "modules.deviceTwin.enable=false", "--timeout", "2m"}

	r := run(t, time.Minute, append(args, "--dry-run")...)
	if r.code != 0 {
		t.Fatalf("--dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"service", "C:\\etc\\kubeedge", "certificates"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--dry-run plan does not mention %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Fatal("--dry-run wrote the configuration")
	}

	r = run(t, 4*time.Minute, args...)
	out := r.stdout + r.stderr
	if r.code == 0 {
		t.Fatalf("join succeeded although the cloud refused the token:\n%s", out)
	}
	for _, want := range []string{"join failed at step", "keadm gettoken", "rolled back"} {
		if !strings.Contains(out, want) {
			t.Errorf("join output lacks %q", want)
		}
	}
	if s := run(t, time.Minute, "service", "status"); !strings.Contains(s.stdout, "not installed") {
		t.Errorf("the service was left behind: %s%s", s.stdout, s.stderr)
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Error("the configuration was left behind")
	}
	filepath.Walk(filepath.Join(prefixC, "etc", "kubeedge"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "c3RhbmRpbg") {
				t.Errorf("the token is still on disk in %s", p)
			}
		}
		return nil
	})
	if t.Failed() {
		t.Logf("join output:\n%s", out)
	}
}

// reset removes what join leaves behind: the service, the configuration,
// the certificates and the database; without a terminal it wants --force.
func TestReset(t *testing.T) {
	prefixC := filepath.Join(os.Getenv("WINEPREFIX"), "drive_c")
	cfg := filepath.Join(prefixC, "etc", "kubeedge", "config", "edgecore.yaml")
	cert := filepath.Join(prefixC, "etc", "kubeedge", "certs", "server.crt")
	if r := run(t, time.Minute, "config", "-e", "127.0.0.1:10000", "-t", testToken, "--offline"); r.code != 0 {
		t.Fatalf("config: exit %d\n%s", r.code, r.stderr)
	}
	// A failure below must not leave the node to the next run, whose join
	// and config would find it: reset is what removes it.
	t.Cleanup(func() {
		if _, err := os.Stat(cfg); err == nil {
			if r := run(t, 2*time.Minute, "reset", "--force"); r.code != 0 {
				t.Errorf("cleaning up: reset --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		}
	})
	// A node that stays up: Wine starts an automatic service as soon as it
	// is installed, and without a container runtime or a cloud edgecore
	// would end at once, which Wine's service manager notices only late.
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	idle := strings.NewReplacer("  edged:\n    enable: true", "  edged:\n    enable: false",
		"  edgeHub:\n    enable: true", "  edgeHub:\n    enable: false").Replace(string(text))
	if idle == string(text) {
		t.Fatal("the generated configuration no longer has edged and edgeHub enabled")
	}
	if err := os.WriteFile(cfg, []byte(idle), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cert), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cert, []byte("certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, time.Minute, "service", "install"); r.code != 0 {
		t.Fatalf("service install: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r := run(t, time.Minute, "reset")
	if r.code == 0 || !strings.Contains(r.stderr, "--force") {
		t.Errorf("reset without a terminal and without --force: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(cfg); err != nil {
		t.Fatal("reset without --force removed the configuration")
	}

	r = run(t, 2*time.Minute, "reset", "--force")
	if r.code != 0 {
		t.Fatalf("reset --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{cfg, cert} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after reset", p)
		}
	}
	if s := run(t, time.Minute, "service", "status"); !strings.Contains(s.stdout, "not installed") {
		t.Errorf("the service is still there after reset: %s", s.stdout)
	}
}
