package preflight

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config/registries"
)

// privateCA is a CA of the test's own and a server certificate it signed
// for 127.0.0.1.
func privateCA(t *testing.T, dir string) (caFile string, server tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "edge private CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "registry"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// The registry rows ask each mirror over TLS with the CA its hosts.toml
// names: a registry behind a private CA answers with that CA, and fails
// with the fix naming the CA when the file names another one.
func TestRegistryRowsCheckEachMirrorWithItsCA(t *testing.T) {
	dir := t.TempDir()
	caFile, cert := privateCA(t, dir)
	otherCA, _ := privateCA(t, t.TempDir())
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")

	root := filepath.Join(dir, "certs.d")
	write := func(ca string) {
		f, err := registries.Parse([]byte("mirrors:\n  docker.io:\n    endpoint: [\""+srv.URL+"\"]\nconfigs:\n  \""+host+"\":\n    tls:\n      ca_file: "+ca+"\n"), "linux")
		if err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(root)
		p := registries.NewPlan(f, "linux", root)
		for _, d := range p.Dirs {
			os.MkdirAll(d, 0o755)
		}
		for _, c := range p.Copies {
			data, _ := os.ReadFile(c.From)
			os.WriteFile(c.To, data, 0o600)
		}
		for _, h := range p.Hosts {
			os.WriteFile(h.Path, h.Data, 0o600)
		}
	}
	probes := Probes{ReadSubdirs: readSubdirs, ReadFile: os.ReadFile, Registry: probeRegistry}
	cfg := Config{RegistryDir: root, Timeout: 5 * time.Second}

	write(caFile)
	rows := checkRegistries(context.Background(), cfg, probes)
	var mirror []Row
	for _, r := range rows {
		if r.Name == nameRegistry+" docker.io" {
			mirror = append(mirror, r)
		}
	}
	if len(mirror) != 1 || mirror[0].Status != Pass || !strings.Contains(mirror[0].Detail, srv.URL+" with the CA "+root) {
		t.Fatalf("rows %+v", rows)
	}

	write(otherCA)
	rows = checkRegistries(context.Background(), cfg, probes)
	found := false
	for _, r := range rows {
		if r.Name == nameRegistry+" docker.io" {
			found = true
			if r.Status != Fail || !strings.Contains(r.Fix, "ca_file") || !strings.Contains(r.Detail, "does not answer") {
				t.Errorf("with another CA: %+v", r)
			}
		}
	}
	if !found {
		t.Fatalf("no row for the mirror: %+v", rows)
	}
	// No registry configuration, no rows.
	if rows := checkRegistries(context.Background(), Config{RegistryDir: filepath.Join(dir, "none")}, probes); len(rows) != 0 {
		t.Errorf("rows without a configuration: %+v", rows)
	}
}
