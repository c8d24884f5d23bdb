//go:build e2e

package e2e

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pki is the cluster's certificate authority and the files the API server
// and its clients need, made fresh for every run.
type pki struct {
	dir                   string
	caCert, caKey         string
	serverCert, serverKey string
	adminCert, adminKey   string
	saPublic, saPrivate   string
	ca                    *x509.Certificate
	caSigner              crypto.Signer
}

func newPKI(t *testing.T, dir string) *pki {
	t.Helper()
	p := &pki{dir: dir}
	caKey := genKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		fatal(t, err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caSigner = caKey
	p.caCert, p.caKey = p.write(t, "ca", der, caKey)

	p.serverCert, p.serverKey = p.issue(t, "apiserver", pkix.Name{CommonName: "kube-apiserver"},
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	p.adminCert, p.adminKey = p.issue(t, "admin", pkix.Name{CommonName: "e2e-admin", Organization: []string{"system:masters"}},
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil)

	saKey := genKey(t)
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		fatal(t, err)
	}
	p.saPublic = filepath.Join(dir, "sa.pub")
	writePEM(t, p.saPublic, "PUBLIC KEY", pub)
	p.saPrivate = filepath.Join(dir, "sa.key")
	writePEM(t, p.saPrivate, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))
	return p
}

func (p *pki) issue(t *testing.T, name string, subject pkix.Name, usage []x509.ExtKeyUsage, ips []net.IP, dns []string) (string, string) {
	t.Helper()
	key := genKey(t)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: usage,
		IPAddresses: ips, DNSNames: dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caSigner)
	if err != nil {
		fatal(t, err)
	}
	return p.write(t, name, der, key)
}

func (p *pki) write(t *testing.T, name string, der []byte, key *rsa.PrivateKey) (string, string) {
	t.Helper()
	cert, keyPath := filepath.Join(p.dir, name+".crt"), filepath.Join(p.dir, name+".key")
	writePEM(t, cert, "CERTIFICATE", der)
	writePEM(t, keyPath, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
	return cert, keyPath
}

func genKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		fatal(t, err)
	}
	return k
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		fatal(t, err)
	}
}
