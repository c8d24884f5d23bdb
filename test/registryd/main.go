// Command registryd is a real OCI registry for the registry test against
// the bundled containerd (make containerd-test): go-containerregistry's
// pkg/registry, in memory, behind TLS with the certificate and key it is
// given and HTTP basic authentication, on loopback. Before it answers it
// pushes a small image (linux, this machine's architecture) to each
// repository named by -push, with the credentials, through its own TLS
// listener, and prints one JSON line: its address and the image's manifest
// and config digests, so that the test can check what containerd pulled.
//
// It is a module of its own (go.mod here) so that go-containerregistry and
// its dependencies stay out of the node's module graph.
package main

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Ready is the line registryd prints once it serves.
type Ready struct {
	Addr string `json:"addr"`
	// Manifest and Config are the pushed image's digests: CRI's image
	// id is the config's.
	Manifest string `json:"manifest"`
	Config   string `json:"config"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	certFile := flag.String("cert", "", "server certificate (PEM)")
	keyFile := flag.String("key", "", "server key (PEM)")
	caFile := flag.String("ca", "", "CA of the server certificate, for the push")
	user := flag.String("user", "", "username every request must give")
	password := flag.String("password", "", "password every request must give")
	push := flag.String("push", "", "comma-separated repository:tag list to push the image to")
	flag.Parse()
	if *certFile == "" || *keyFile == "" || *caFile == "" || *user == "" || *password == "" || *push == "" {
		log.Fatal("registryd: -cert, -key, -ca, -user, -password and -push are required")
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	caPEM, err := os.ReadFile(*caFile)
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		log.Fatalf("registryd: %s holds no certificate", *caFile)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	srv := &http.Server{
		Handler:   basicAuth(*user, *password, registry.New(registry.Logger(log.New(os.Stderr, "registryd: ", 0)))),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && err != http.ErrServerClosed {
			log.Fatalf("registryd: %v", err)
		}
	}()
	addr := ln.Addr().String()

	img, err := random.Image(2048, 2)
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		log.Fatalf("registryd: %v", err)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	for _, repo := range strings.Split(*push, ",") {
		ref, err := name.ParseReference(addr+"/"+repo, name.StrictValidation)
		if err != nil {
			log.Fatalf("registryd: -push %s: %v", repo, err)
		}
		if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: *user, Password: *password}), remote.WithTransport(transport)); err != nil {
			log.Fatalf("registryd: push %s: %v", ref, err)
		}
	}
	manifest, err := img.Digest()
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	config, err := img.ConfigName()
	if err != nil {
		log.Fatalf("registryd: %v", err)
	}
	line, _ := json.Marshal(Ready{Addr: addr, Manifest: manifest.String(), Config: config.String()})
	fmt.Println(string(line))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	srv.Close()
}

// basicAuth answers 401 with a Basic challenge to every request without
// the credentials, as a registry behind basic authentication (Harbor's
// robot accounts, distribution's htpasswd) does; the challenge is what
// makes containerd send the credentials of its configuration.
func basicAuth(user, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="registryd"`)
			w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
