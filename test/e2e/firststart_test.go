//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// absentFor is how long the cloud stays away after the node's first
// start: long enough for many certificate attempts and for a crash loop
// to show.
const absentFor = 30 * time.Second

func TestWindowsFirstStartWithoutTheCloud(t *testing.T) { firstStartWithoutTheCloud(t, "windows") }

func TestLinuxFirstStartWithoutTheCloud(t *testing.T) { firstStartWithoutTheCloud(t, "linux") }

// firstStartWithoutTheCloud provisions a node before its cloud is
// reachable: the configuration comes from `edgecore config --offline`
// while cloudcore is down, and edgecore starts without certificates and
// without a cloud. Upstream's certificate manager panicked at once, and
// edged's cleanup then panicked over it (a crash loop as a service). The
// node must stay up, say once why it is not connected, and be Ready once
// cloudcore answers.
func firstStartWithoutTheCloud(t *testing.T, goos string) {
	c := startCluster(t)
	e := newNamedEdge(t, c, goos, "e2e-first-"+goos)
	token := c.token(t)
	c.cloudcore.stop()
	// The configuration a node provisioned before its cloud gets: no
	// check that cloudcore answers.
	cri := "unix://" + filepath.Join(e.dir, "cri.sock")
	if goos == "windows" {
		cri = "npipe://./pipe/containerd-containerd"
	}
	bin, args := e.command(e.bin, "config", "--offline", "--force", "-e", "127.0.0.1:"+strconv.Itoa(hubPort), "-s", strconv.Itoa(certPort),
		"-t", token, "-i", e.name, "-p", cri, "-o", e.cfgArg)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), e.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fatalf(t, "edgecore config --offline: %v\n%s", err, out)
	}
	e.adjustConfig(t)

	e.startEdgecore(t)
	const waiting = "Waiting for cloudcore to issue the node's certificates"
	eventually(t, 2*time.Minute, "edgecore saying why it waits", func() (bool, error) {
		return e.edgecore.logContains(waiting), nil
	})
	time.Sleep(absentFor)
	if e.edgecore.exited() {
		fatalf(t, "edgecore ended while the cloud was absent at its first start")
	}
	log, _ := os.ReadFile(e.edgecore.log)
	for _, bad := range []string{"panic:", "nil pointer dereference", "panicked"} {
		if bytes.Contains(log, []byte(bad)) {
			errorf(t, "edgecore's log holds %q while the cloud was absent", bad)
		}
	}
	if n := bytes.Count(log, []byte(waiting)); n != 1 {
		errorf(t, "edgecore said why it waits %d times in %v, want once", n, absentFor)
	}
	if bytes.Contains(log, []byte(token)) {
		errorl(t, "edgecore's log holds the join token")
	}
	t.Logf("node %s: edgecore ran %v without the cloud at its first start, saying once: %s", e.name, absentFor, waiting)

	answered := c.restartCloudcore(t)
	eventually(t, readyBound, "node "+e.name+" Ready", c.nodeReady(e.name, time.Time{}))
	t.Logf("e2e figures: %s first start without the cloud: Ready %s after cloudcore answered", goos, fmtDur(time.Since(answered)))
	if !e.edgecore.logContains("Cloudcore answered: the node has its certificates and is connected") {
		errorl(t, "edgecore did not say that the wait for its certificates ended")
	}
}
