package preflight

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestReadCertificate(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	notBefore := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "edge-node-1"},
		NotBefore: notBefore, NotAfter: notBefore.AddDate(1, 0, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	// A key before the certificate, as some bundles have it.
	pemFile := filepath.Join(dir, "server.crt")
	content := append(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	if err := os.WriteFile(pemFile, content, 0o600); err != nil {
		t.Fatal(err)
	}
	derFile := filepath.Join(dir, "server.der")
	if err := os.WriteFile(derFile, der, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{pemFile, derFile} {
		v, err := readCertificate(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v.Subject != "CN=edge-node-1" || !v.NotBefore.Equal(notBefore) || !v.NotAfter.Equal(notBefore.AddDate(1, 0, 0)) {
			t.Errorf("%s: %+v", path, v)
		}
	}
	if _, err := readCertificate(filepath.Join(dir, "missing.crt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
	junk := filepath.Join(dir, "junk.crt")
	os.WriteFile(junk, []byte("not a certificate"), 0o600)
	if _, err := readCertificate(junk); err == nil || !strings.Contains(err.Error(), "holds no readable certificate") {
		t.Errorf("junk file: %v", err)
	}
}

func TestReadDirNamesAndExists(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "0-containerd-nat.conf"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "10-nat.conf"), []byte("{}"), 0o644)
	os.Mkdir(filepath.Join(dir, "old.conf"), 0o755) // a folder is not a config
	names, err := readDirNames(dir)
	sort.Strings(names)
	if err != nil || strings.Join(names, ",") != "0-containerd-nat.conf,10-nat.conf" {
		t.Errorf("names %v, err %v", names, err)
	}
	if _, err := readDirNames(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
	if ok, err := exists(dir); !ok || err != nil {
		t.Errorf("exists(%s) = %v, %v", dir, ok, err)
	}
	if ok, err := exists(filepath.Join(dir, "none")); ok || err != nil {
		t.Errorf("exists(missing) = %v, %v", ok, err)
	}
}
