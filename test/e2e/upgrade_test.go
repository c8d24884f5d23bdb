//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeedge-windows/edgecore/config"
)

const upgradeBound = 8 * time.Minute

// TestWindowsUpgrade upgrades a joined Windows node in place with
// `edgecore.exe upgrade --package`, the way an operator does on the host:
// to the same code released again as v0.2.0, then to a v0.3.0 whose binary
// fails at once (the node must come back on v0.2.0), then back to v0.1.0
// with `edgecore.exe rollback`. After each, the node is Ready on the
// version the result line names.
func TestWindowsUpgrade(t *testing.T) {
	good, bad := mustEnv(t, "UPGRADE_GOOD_ZIP"), mustEnv(t, "UPGRADE_BAD_ZIP")
	c := startCluster(t)
	h := newWinHost(t)
	// A path with a space, where operators put programs.
	h.install(t, `C:\Program Files\edgecore`)
	j := &journey{t: t, c: c, h: h, token: c.token(t), layout: config.NewLayout(config.Host{GOOS: "windows"})}
	j.fakecri = j.startFakeCRI("fakecri")

	j.node = j.joinedNode(j.run(j.args(joinCommand), 0).out)
	eventually(t, readyBound, "node "+j.node+" Ready", c.nodeReady(j.node, time.Time{}))
	j.runsKubeEdge("v1.20.0")

	steps := []struct {
		args     []string
		code     int
		result   string
		kubeedge string
	}{
		{[]string{"upgrade", "--package", winPath(good), "--timeout", "3m"}, 0, "result=success action=upgrade from=v0.1.0 to=v0.2.0", "v1.20.1"},
		{[]string{"upgrade", "--package", winPath(bad), "--timeout", "2m"}, 2, "result=rolled-back action=upgrade from=v0.2.0 to=v0.3.0", "v1.20.1"},
		{[]string{"rollback"}, 0, "result=success action=rollback from=v0.2.0 to=v0.1.0", "v1.20.0"},
	}
	for _, s := range steps {
		begin := time.Now()
		r := h.edgecore(t, upgradeBound, s.args...)
		t.Logf("edgecore.exe %s: exit %d after %s\n%s", strings.Join(s.args, " "), r.code, fmtDur(r.duration), indent(r.out))
		if r.code != s.code || !strings.Contains(lastLine(r.out), s.result) {
			j.dumpLog()
			t.Fatalf("edgecore.exe %s: exit %d and last line %q; want exit %d and %q", s.args[0], r.code, lastLine(r.out), s.code, s.result)
		}
		eventually(t, readyBound, "node Ready after "+s.args[0], c.nodeReady(j.node, begin))
		j.runsKubeEdge(s.kubeedge)
		t.Logf("%s: %s in %s, node Ready on KubeEdge %s", s.args[0], s.result, fmtDur(r.duration), s.kubeedge)
	}
}

// runsKubeEdge waits until the node reports the KubeEdge version the
// running edgecore.exe was built from (cloudcore reads it from there to
// decide which nodes a NodeUpgradeJob concerns).
func (j *journey) runsKubeEdge(version string) {
	j.t.Helper()
	eventually(j.t, readyBound, "node reports KubeEdge "+version, func() (bool, error) {
		n, err := j.c.client.CoreV1().Nodes().Get(context.Background(), j.node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		kv := n.Status.NodeInfo.KubeletVersion
		return strings.HasSuffix(kv, "kubeedge-"+version), fmt.Errorf("kubeletVersion %s", kv)
	})
}

var resultLine = regexp.MustCompile(`(?m)^result=.*$`)

// lastLine is the result line an automation tool parses.
func lastLine(out string) string {
	all := resultLine.FindAllString(out, -1)
	if len(all) == 0 {
		return ""
	}
	return strings.TrimSpace(all[len(all)-1])
}

// winPath names a file of this machine as Wine's Z: drive shows it.
func winPath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }
