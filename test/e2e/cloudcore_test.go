//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/cloudcore/v1alpha1"
)

// Fixed ports, as an operator's cloudcore has them; everything listens on
// loopback only. E2E_PORT_OFFSET moves cloudcore's four ports (these and
// cloudStream's) by that much, so that a second loopback cloud can run
// beside the first (make chaos's Linux and Wine parts at once).
var (
	hubPort  = 10000 + portOffset
	certPort = 10002 + portOffset
)

// portOffset is E2E_PORT_OFFSET; a value that is not a whole number from
// 0 to 50000 is portOffsetErr, which startCloudcore reports rather than
// run on the fixed ports the operator meant to move.
var portOffset, portOffsetErr = func() (int, error) {
	v := os.Getenv("E2E_PORT_OFFSET")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 50000 {
		return 0, fmt.Errorf("E2E_PORT_OFFSET=%q: want a whole number from 0 to 50000 (10000 moves cloudcore's ports to 20000-20004)", v)
	}
	return n, nil
}()

// startCloudcore writes cloudcore's configuration from its own
// --defaultconfig output, changed only where a loopback test cluster needs
// it, and starts it.
func (c *cluster) startCloudcore(t *testing.T) {
	t.Helper()
	if portOffsetErr != nil {
		fatal(t, portOffsetErr)
	}
	bin := mustEnv(t, "CLOUDCORE_BIN")
	out, err := exec.Command(bin, "--defaultconfig").Output()
	if err != nil {
		fatalf(t, "cloudcore --defaultconfig: %v", err)
	}
	var cfg v1alpha1.CloudCoreConfig
	if err := yaml.Unmarshal(dropComments(out), &cfg); err != nil {
		fatalf(t, "parse cloudcore --defaultconfig: %v", err)
	}
	cfg.KubeAPIConfig.KubeConfig = c.kubeconfig
	cfg.CommonConfig.MonitorServer.BindAddress = "127.0.0.1:" + strconv.Itoa(freePort(t))
	hub := cfg.Modules.CloudHub
	hub.AdvertiseAddress = []string{"127.0.0.1"}
	hub.DNSNames = []string{"localhost"}
	hub.WebSocket.Address, hub.WebSocket.Port = "127.0.0.1", uint32(hubPort)
	hub.HTTPS.Address, hub.HTTPS.Port = "127.0.0.1", uint32(certPort)
	hub.Quic.Enable = false
	hub.UnixSocket.Enable = false
	for _, p := range []*string{&hub.TLSCAFile, &hub.TLSCAKeyFile, &hub.TLSCertFile, &hub.TLSPrivateKeyFile} {
		*p = filepath.Join(c.dir, "cloudcore", filepath.Base(*p))
	}
	cfg.Modules.EdgeController.Enable = true
	cfg.Modules.SyncController.Enable = true
	cfg.Modules.IptablesManager.Enable = false
	cfg.Modules.DeviceController.Enable = false
	// cloudStream as an operator turns it on for kubectl logs and exec:
	// the tunnel with the hub's certificates (the tunnel files named here
	// do not exist, so it takes the hub's), and the stream port with a
	// serving certificate of the cluster's CA, which also vouches for
	// the API server's client certificate.
	cs := cfg.Modules.CloudStream
	cs.Enable = true
	cs.TLSTunnelCAFile = filepath.Join(c.dir, "cloudcore", "tunnel-ca.crt")
	cs.TLSTunnelCertFile = filepath.Join(c.dir, "cloudcore", "tunnel.crt")
	cs.TLSTunnelPrivateKeyFile = filepath.Join(c.dir, "cloudcore", "tunnel.key")
	cs.TunnelPort, cs.StreamPort = uint32(tunnelPort), uint32(streamPort)
	cs.TLSStreamCAFile = c.pki.caCert
	cs.TLSStreamCertFile, cs.TLSStreamPrivateKeyFile = c.pki.issue(t, "cloudstream", pkix.Name{CommonName: "cloudstream"},
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	cfg.Modules.Router.Enable = false
	cfg.Modules.DynamicController.Enable = c.dynamicController
	// NodeUpgradeJobs (TestWindowsUpgrade) go through the task manager.
	cfg.Modules.TaskManager.Enable = true
	data, err := yaml.Marshal(&cfg)
	if err != nil {
		fatal(t, err)
	}
	path := filepath.Join(c.dir, "cloudcore.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		fatal(t, err)
	}
	c.cloudArgs = []string{"--config", path}
	c.hubPort, c.certPort = hubPort, certPort
	// The ports are fixed: a cloudcore left over from an interrupted run
	// would answer in this one's place, with another CA.
	for _, port := range []int{hubPort, certPort, streamPort, tunnelPort} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			fatalf(t, "port %d is taken before cloudcore starts (a cloudcore of an interrupted run?): %v", port, err)
		}
		l.Close()
	}
	c.restartCloudcore(t)
}

// restartCloudcore starts cloudcore with the configuration startCloudcore
// wrote and waits for its ports. It returns when the process started: what
// "Ready again after the outage" counts from, cloudcore's own start-up
// included, as an operator who restarts it sees it. c.hubAnswered is when
// the hub's port first answered, the moment a node can connect again.
func (c *cluster) restartCloudcore(t *testing.T) time.Time {
	t.Helper()
	c.cloudcore = start(t, c.dir, "cloudcore", nil, mustEnv(t, "CLOUDCORE_BIN"), c.cloudArgs...)
	// Polled every 20 ms rather than waitTCP's 250, so that the time is
	// close to when the port opened.
	hub := "127.0.0.1:" + strconv.Itoa(hubPort)
	c.hubAnswered = time.Time{}
	for c.hubAnswered.IsZero() {
		if conn, err := net.DialTimeout("tcp", hub, time.Second); err == nil {
			conn.Close()
			c.hubAnswered = time.Now()
		} else if time.Since(c.cloudcore.started) > 2*time.Minute {
			fatalf(t, "cloudcore's hub %s did not answer within 2m: %v", hub, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitTCP(t, "127.0.0.1:"+strconv.Itoa(certPort), time.Minute)
	waitTCP(t, "127.0.0.1:"+strconv.Itoa(tunnelPort), time.Minute)
	return c.cloudcore.started
}

// startControllerManager runs KubeEdge's controller-manager against the
// cluster, as `keadm init --set controllerManager.enable=true` deploys it
// beside cloudcore: it is what takes a v1alpha2 NodeUpgradeJob from an empty
// status to the Init phase cloudcore's taskManager sends to nodes.
func (c *cluster) startControllerManager(t *testing.T) {
	t.Helper()
	probe := "127.0.0.1:" + strconv.Itoa(freePort(t))
	c.controllerManager = start(t, c.dir, "controller-manager", []string{"KUBECONFIG=" + c.kubeconfig},
		mustEnv(t, "CONTROLLER_MANAGER_BIN"), "--health-probe-bind-address", probe)
	waitTCP(t, probe, time.Minute)
}

// token is what `keadm gettoken` prints: the tokendata of the secret
// cloudcore keeps in its namespace.
func (c *cluster) token(t *testing.T) string {
	t.Helper()
	var token string
	eventually(t, time.Minute, "cloudcore's join token", func() (bool, error) {
		s, err := c.client.CoreV1().Secrets("kubeedge").Get(context.Background(), "tokensecret", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = string(bytes.TrimSpace(s.Data["tokendata"]))
		return token != "", nil
	})
	return token
}

func dropComments(b []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
