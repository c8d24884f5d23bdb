package preflight

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	quic "github.com/lucas-clemente/quic-go"
)

// A QUIC server of the library cloudcore's hub uses answers the probe; the
// same port closed does not, and the probe gives up at the deadline.
func TestDialQUIC(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cloudcore"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, nil)
	if err != nil && runtime.GOOS == "windows" && strings.Contains(err.Error(), "wsaioctl") {
		// Wine lacks the ioctl Go sets on every Windows UDP socket.
		t.Skip("no UDP sockets here:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := l.Accept(); err != nil {
				return
			}
		}
	}()
	addr := l.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := dialQUIC(ctx, addr); err != nil {
		t.Errorf("QUIC server at %s: %v", addr, err)
	}
	l.Close()

	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := dialQUIC(ctx, addr); err == nil || err.Error() != "no answer to a QUIC handshake within 1s" {
		t.Errorf("closed UDP port %s: %v", addr, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the probe took %v past its 1s deadline", d)
	}
}
