package runtimeinstall

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kubeedge/kubeedge/pkg/image"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/registries"
	"github.com/kubeedge-windows/edgecore/internal/images/imagetest"
	"github.com/kubeedge-windows/edgecore/internal/prepull"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// TestRealContainerdRegistry is join's --registry-config against the real
// thing: the containerd the release bundles (its version, built for
// Linux), configured by the code join runs (installRegistries, then
// containerd.Generate), pulls through CRI from a real registry
// (go-containerregistry's, test/registryd) behind TLS from a private CA
// made here and basic authentication. It pulls with the CA and the
// credentials, through a mirror with a prefix rewrite, and fails without
// the credentials and with another CA.
func TestRealContainerdRegistry(t *testing.T) {
	bin, regd := os.Getenv("EDGECORE_BUNDLED_CONTAINERD_BIN"), os.Getenv("EDGECORE_REGISTRYD_BIN")
	if bin == "" || regd == "" {
		t.Skip("EDGECORE_BUNDLED_CONTAINERD_BIN or EDGECORE_REGISTRYD_BIN is not set: `make containerd-test` builds the bundle's containerd for Linux and test/registryd and runs this test against them")
	}
	if os.Geteuid() != 0 {
		t.Fatal("containerd's native snapshotter needs root (chown of unpacked files): run `make containerd-test` as root, as CI does")
	}
	// A short path: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "creg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	// The operator's files: a private CA and the registry's certificate.
	operator := filepath.Join(dir, "operator")
	if err := os.Mkdir(operator, 0o700); err != nil {
		t.Fatal(err)
	}
	caFile, certFile, keyFile := writeRegistryPKI(t, operator)
	const user, password = "edge-robot", `s3cret "pass" \ word`
	reg := startRegistryd(t, regd, certFile, keyFile, caFile, user, password,
		"edge/tiny:1,mirrored/edge/tiny:1,edge/prepull:1,mirrored/edge/prepull:1,edge/secret:1")
	_, port, _ := net.SplitHostPort(reg.Addr)
	alias := "localhost:" + port // the same server, configured without credentials

	yaml := fmt.Sprintf(`mirrors:
  registry.example.test:
    endpoint: ["https://%[1]s"]
    rewrite:
      "^(.*)$": "mirrored/$1"
configs:
  "%[1]s":
    auth:
      username: %[2]q
      password: %[3]q
    tls:
      ca_file: %[4]q
  "%[5]s":
    tls:
      ca_file: %[4]q
`, reg.Addr, user, password, caFile, alias)
	f, err := registries.Parse([]byte(yaml), config.Linux)
	if err != nil {
		t.Fatal(err)
	}

	// What join writes: the hosts folder in containerd's folder, then
	// config.toml with its credentials.
	l := config.Layout{
		GOOS:                 config.Linux,
		ContainerdDir:        filepath.Join(dir, "containerd"),
		ContainerdConfigFile: filepath.Join(dir, "containerd", "config.toml"),
		ContainerdRootDir:    filepath.Join(dir, "root"),
		ContainerdStateDir:   filepath.Join(dir, "state"),
		CNIBinDir:            filepath.Join(dir, "cni", "bin"),
		CNIConfDir:           filepath.Join(dir, "cni", "conf"),
	}
	in := &Installer{o: Options{Layout: l, Registries: f}, goos: config.Linux, h: Host{
		CopyNew:  copyNew,
		WriteNew: func(p string, data []byte) error { return config.WriteNewFile(p, data, 0o600, false) },
		Protect: protect.Host{
			Exists: func(p string) (bool, error) {
				_, err := os.Lstat(p)
				if errors.Is(err, fs.ErrNotExist) {
					return false, nil
				}
				return err == nil, err
			},
			Mkdir: func(p, _ string) error { return os.Mkdir(p, 0o700) },
		},
	}}
	var out bytes.Buffer
	r, err := in.installRegistries(&out)
	t.Logf("join's registry step:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cret") {
		t.Errorf("join's output shows the password:\n%s", out.String())
	}
	data, err := containerd.Generate(containerd.BundledConfig{
		CNI:          containerd.Dirs{BinDir: l.CNIBinDir, ConfDir: l.CNIConfDir},
		SandboxImage: "registry.k8s.io/pause:3.10.2",
		Root:         l.ContainerdRootDir,
		State:        l.ContainerdStateDir,
		Registry:     r,
	})
	if err != nil {
		t.Fatal(err)
	}
	// What only this Linux run needs: its own socket and a snapshotter
	// that works anywhere (Windows has its own default).
	sock := filepath.Join(dir, "c.sock")
	data = append(data, fmt.Sprintf(`
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'native'
`, sock, sock+".ttrpc")...)
	if err := in.h.WriteNew(l.ContainerdConfigFile, data); err != nil {
		t.Fatal(err)
	}
	t.Logf("config.toml:\n%s", strings.ReplaceAll(string(data), "s3cret", "<redacted>"))

	// The credentials are in config.toml and in no file of the hosts
	// folder.
	if !bytes.Contains(data, []byte("s3cret")) {
		t.Fatalf("config.toml has no credentials")
	}
	hostsDir := RegistryDir(l)
	var hostsFiles []string
	filepath.WalkDir(hostsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		hostsFiles = append(hostsFiles, strings.TrimPrefix(p, hostsDir+"/"))
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("s3cret")) {
			t.Errorf("%s holds the password", p)
		}
		return nil
	})
	t.Logf("hosts folder: %v", hostsFiles)

	imagetest.StartContainerd(t, bin, l.ContainerdConfigFile, func() error {
		_, err := os.Stat(sock)
		return err
	})
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	images := runtimeapi.NewImageServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pull := func(ref string) error {
		_, err := images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		return err
	}
	// pulled checks that ref is the image registryd pushed.
	pulled := func(ref string) {
		t.Helper()
		if err := pull(ref); err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		st, err := images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil {
			t.Fatal(err)
		}
		if st.Image == nil || st.Image.Id != reg.Config {
			t.Fatalf("image status of %s: %+v, want the image of id %s", ref, st.Image, reg.Config)
		}
	}

	// Through the mirror, whose endpoint adds the prefix mirrored/, with
	// the mirror's CA and credentials: first, so that the layers come
	// from there (registry.example.test itself does not resolve).
	pulled("registry.example.test/edge/tiny:1")
	// From the registry by its own name, with its CA and credentials.
	direct := reg.Addr + "/edge/tiny:1"
	pulled(direct)

	// An ImagePrePullJob's pulls take the same way: upstream's image
	// runtime over CRI, as the node's runner builds it
	// (internal/modules), driven by the runner's own code. Without a
	// pull secret for the registry containerd answers the registry's
	// challenge with config.toml's credentials, through the mirror and
	// directly; a job's pull secret for the registry is what is sent
	// instead, so a wrong one fails, without its password in the
	// image's status. The images are new to containerd: the runtime
	// pulls only what it lacks.
	rt, err := image.NewImageRuntime("unix://"+sock, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jobImages := []string{"registry.example.test/edge/prepull:1", reg.Addr + "/edge/prepull:1"}
	statuses, all := prepull.Pull(ctx, rt, prepull.Job{Images: jobImages})
	if !all {
		t.Errorf("the pre-pull without a pull secret: %+v", statuses)
	}
	for _, ref := range jobImages {
		if st, err := images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err != nil || st.Image == nil || st.Image.Id != reg.Config {
			t.Errorf("after the pre-pull, %s: %+v %v", ref, st, err)
		}
	}
	const wrong = "not-the-password"
	secret := fmt.Sprintf(`{"auths": {%q: {"username": %q, "password": %q}}}`, reg.Addr, user, wrong)
	ring, err := prepull.NewKeyring([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	statuses, all = prepull.Pull(ctx, rt, prepull.Job{Images: []string{reg.Addr + "/edge/secret:1"}, Keyring: ring})
	switch {
	case all || len(statuses) != 1:
		t.Errorf("the pre-pull with a wrong pull secret succeeded: %+v (config.toml's credentials were used instead)", statuses)
	case strings.Contains(statuses[0].Reason, wrong):
		t.Errorf("the image's status shows the secret's password: %s", statuses[0].Reason)
	default:
		t.Logf("with a wrong pull secret: %s", statuses[0].Reason)
	}

	// The same server by another name, with the CA and no credentials:
	// refused by the registry, not by TLS.
	err = pull(alias + "/edge/tiny:1")
	switch {
	case err == nil:
		t.Errorf("pull from %s without credentials succeeded", alias)
	case !strings.Contains(err.Error(), "authorization failed") && !strings.Contains(err.Error(), "401"):
		// containerd says "authorization failed: no basic auth
		// credentials" when the registry's Basic challenge finds none.
		t.Errorf("pull from %s without credentials: %v, want the registry's challenge unanswered", alias, err)
	default:
		t.Logf("without credentials: %v", err)
	}

	// With another CA in place of the one join copied in, the registry's
	// certificate is not trusted: containerd reads hosts.toml and its
	// files at each pull.
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	otherCA, _, _ := writeRegistryPKI(t, other)
	ca := filepath.Join(hostsDir, registries.HostDir(config.Linux, reg.Addr), "ca.crt")
	otherPEM, err := os.ReadFile(otherCA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, otherPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	err = pull(direct)
	switch {
	case err == nil:
		t.Errorf("pull %s with another CA succeeded", direct)
	case !strings.Contains(err.Error(), "x509") && !strings.Contains(err.Error(), "certificate"):
		t.Errorf("pull %s with another CA: %v, want a certificate error", direct, err)
	default:
		t.Logf("with another CA: %v", err)
	}
}

// registryReady is test/registryd's line once it serves.
type registryReady struct {
	Addr, Manifest, Config string
}

func startRegistryd(t *testing.T, exe, cert, key, ca, user, password, push string) registryReady {
	t.Helper()
	var logs bytes.Buffer
	cmd := exec.Command(exe, "-cert", cert, "-key", key, "-ca", ca, "-user", user, "-password", password, "-push", push)
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("registryd's log:\n%s", logs.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		var r registryReady
		if !ok || json.Unmarshal([]byte(line), &r) != nil || r.Addr == "" || r.Config == "" {
			t.Fatalf("registryd did not start (%q):\n%s", line, logs.String())
		}
		return r
	case <-time.After(time.Minute):
		t.Fatalf("registryd did not answer within a minute:\n%s", logs.String())
	}
	return registryReady{}
}

// writeRegistryPKI writes a private CA and a server certificate it
// signed for 127.0.0.1 and localhost, as an operator's site has them.
func writeRegistryPKI(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "edge site CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "registry"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("registry.pem", "CERTIFICATE", srvDER), write("registry-key.pem", "EC PRIVATE KEY", keyDER)
}
