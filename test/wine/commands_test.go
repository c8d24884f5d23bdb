//go:build wine

package wine

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testToken = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e." +
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJl"

// listen stands in for one cloudcore port on loopback.
func listen(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

// preflight without containerd: the cloudcore ports answer, the container
// runtime does not, and every FAIL row carries its fix.
func TestPreflight(t *testing.T) {
	hub, certs := listen(t), listen(t)
	_, certPort, _ := net.SplitHostPort(certs)
	cfg := filepath.Join(driveCTempDir(t), "edgecore.yaml")
	// The tunnel's port is fixed (10004 on the cloud's host), which a
	// stand-in cannot count on having on loopback: the unit tests check
	// the stream row.
	if r := run(t, time.Minute, "config", "-e", hub, "-s", certPort, "-t", testToken, "--stream=false", "-o", toWindowsPath(cfg)); r.code != 0 {
		t.Fatalf("config: exit %d\n%s", r.code, r.stderr)
	}

	r := run(t, time.Minute, "preflight", "--offline", "--config", toWindowsPath(cfg))
	if r.code != 1 {
		t.Errorf("exit code %d, want 1 (no container runtime)", r.code)
	}
	for _, want := range []string{
		"PASS    cloudcore websocket",
		"PASS    cloudcore https",
		"PASS    No kubelet/kube-proxy",
		"FAIL    containerd CRI         npipe://./pipe/containerd-containerd",
		"fix: start containerd",
		// Wine reports Windows 10 1903 (build 18362), for which no pause
		// release has a variant: judged without a registry.
		"FAIL    Sandbox image          registry.k8s.io/pause:3.10.2 has no variant for this host's build 18362",
		"fix: no pause release has a variant for build 18362",
		"preflight: ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("preflight output lacks %q", want)
		}
	}
	lines := strings.Split(r.stdout, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "FAIL") && (i+1 >= len(lines) || !strings.Contains(lines[i+1], "fix: ")) {
			t.Errorf("FAIL row without a fix: %q", line)
		}
	}
	if t.Failed() {
		t.Logf("preflight output:\n%s", r.stdout)
	}
}

// preflight before join, as the quick start runs it (step 5 before step 6):
// there is no configuration yet, so nothing may FAIL over the cloud; the
// cloud rows say why they are skipped. Earlier the sample's placeholder
// cloud address was dialled and both cloud rows failed.
func TestPreflightBeforeJoin(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "edgecore.yaml")
	r := run(t, time.Minute, "preflight", "--offline", "--config", toWindowsPath(missing))
	for _, want := range []string{
		"No configuration at ",
		"SKIP    cloudcore              not joined yet: join checks cloudcore itself",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("preflight output lacks %q", want)
		}
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		// Host rows may fail under Wine (it has no containerd); the rows
		// that depend on the configuration may not.
		if strings.HasPrefix(line, "FAIL") && (strings.Contains(line, "cloudcore") || strings.Contains(line, "Clock")) {
			t.Errorf("a row that needs the cloud fails before join: %q", line)
		}
	}
	if t.Failed() {
		t.Logf("preflight output:\n%s", r.stdout)
	}
}

func TestCNIConfig(t *testing.T) {
	forgetPodNetworkRecord(t)
	// On the prefix's drive C, and with a plugin folder of its own there:
	// cni-config refuses CNI folders below one others may rename (Z:\tmp
	// under Wine), and creates the missing ones it points containerd at.
	dir := driveCTempDir(t)
	out, bin := filepath.Join(dir, "conf", "0-containerd-nat.conf"), toWindowsPath(filepath.Join(dir, "bin"))
	r := run(t, time.Minute, "cni-config", "--subnet", "10.244.2.0/24", "--gateway", "10.244.3.1", "--dns", "10.0.0.10", "-o", toWindowsPath(out), "--cni-bin-dir", bin)
	if r.code != 1 || !strings.Contains(r.stderr, "--gateway 10.244.3.1") || !strings.Contains(r.stderr, "10.244.2.1") {
		t.Errorf("a gateway outside the subnet: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a configuration was written although the gateway was wrong")
	}

	r = run(t, time.Minute, "cni-config", "--subnet", "10.244.2.0/24", "--dns", "10.0.0.10", "-o", toWindowsPath(out), "--cni-bin-dir", bin)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Type string `json:"type"`
		IPAM struct {
			Subnet string              `json:"subnet"`
			Routes []map[string]string `json:"routes"`
		} `json:"ipam"`
		DNS struct {
			Nameservers []string `json:"nameservers"`
		} `json:"dns"`
		Capabilities map[string]bool `json:"capabilities"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if conf.Type != "nat" || conf.IPAM.Subnet != "10.244.2.0/24" || len(conf.IPAM.Routes) != 1 ||
		conf.IPAM.Routes[0]["gw"] != "10.244.2.1" || strings.Join(conf.DNS.Nameservers, ",") != "10.0.0.10" || conf.Capabilities["dns"] {
		t.Errorf("unexpected CNI configuration:\n%s", data)
	}
}
