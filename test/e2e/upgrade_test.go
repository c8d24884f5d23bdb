//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fsmv1 "github.com/kubeedge/api/apis/fsm/v1alpha1"
	opsv1 "github.com/kubeedge/api/apis/operations/v1alpha1"
	kubeedgeclient "github.com/kubeedge/api/client/clientset/versioned"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

const upgradeBound = 8 * time.Minute

// TestWindowsUpgrade upgrades a joined Windows node in place with
// `edgecore.exe upgrade --package`, the way an operator does on the host:
// to the same code released again as v0.2.0, then to a v0.3.0 whose binary
// fails at once (the node must come back on v0.2.0), then back to v0.1.0
// with `edgecore.exe rollback`. After each, the node is Ready on the
// version the result line names. Then the cloud does the same with
// NodeUpgradeJobs (see upgradeFromCloud).
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
	j.upgradeFromCloud(good, bad)
}

// upgradeFromCloud drives the node's upgrade from the cloud the way the
// README tells an operator to: upgrade.yaml beside the configuration names
// a package repository (here a directory of this machine, as a file share
// would be), and NodeUpgradeJobs created with client-go name the version.
// cloudcore sends a job only to nodes whose KubeEdge version is older than
// spec.version, so the releases are published under the KubeEdge version
// they are built from: v1.20.1 (the good one) and v1.20.2 (whose binary
// exits at once). The first job carries the package's digest; the second
// none, so the node takes it from the SHA256SUMS beside the packages.
func (j *journey) upgradeFromCloud(good, bad string) {
	t := j.t
	repo := t.TempDir()
	sums, digest := "", ""
	for _, p := range []struct{ zip, version string }{{good, "v1.20.1"}, {bad, "v1.20.2"}} {
		name := "edgecore-" + p.version + "-windows-amd64.zip"
		sum := copyFile(t, p.zip, filepath.Join(repo, name))
		sums += sum + "  " + name + "\n"
		if p.zip == good {
			digest = "sha256:" + sum
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "SHA256SUMS"), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := "repository: '" + winPath(repo) + `\edgecore-{version}-windows-amd64.zip'` + "\nhealthTimeout: 3m\n"
	if err := os.WriteFile(j.h.drive(upgrade.SettingsPath(j.layout.GOOS, j.layout.ConfigFile)), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := kubeedgeclient.NewForConfig(j.c.rest)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []struct {
		name, version, digest string
		want                  fsmv1.State
		kubeedge              string
	}{
		{"windows-to-v1.20.1", "v1.20.1", digest, fsmv1.TaskSuccessful, "v1.20.1"},
		{"windows-to-v1.20.2", "v1.20.2", "", fsmv1.TaskFailed, "v1.20.1"},
	}
	for _, jb := range jobs {
		begin := time.Now()
		timeout := uint32(600)
		job := &opsv1.NodeUpgradeJob{
			ObjectMeta: metav1.ObjectMeta{Name: jb.name},
			Spec: opsv1.NodeUpgradeJobSpec{
				Version: jb.version, NodeNames: []string{j.node}, TimeoutSeconds: &timeout,
				ImageDigestGatter: &opsv1.ImageDigestGatter{},
			},
		}
		if jb.digest != "" {
			job.Spec.ImageDigestGatter.Value = &jb.digest
		}
		if _, err := client.OperationsV1alpha1().NodeUpgradeJobs().Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create NodeUpgradeJob %s: %v", jb.name, err)
		}
		var last opsv1.NodeUpgradeJobStatus
		done := func() (bool, error) {
			got, err := client.OperationsV1alpha1().NodeUpgradeJobs().Get(context.Background(), jb.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = got.Status
			switch got.Status.State {
			case fsmv1.TaskSuccessful, fsmv1.TaskFailed:
				return true, nil
			}
			return false, fmt.Errorf("state %q", got.Status.State)
		}
		if !poll(upgradeBound, done) {
			j.dumpLog()
			j.dumpUpgradeLog()
			t.Fatalf("NodeUpgradeJob %s did not end within %s; status %s", jb.name, upgradeBound, statusJSON(last))
		}
		t.Logf("NodeUpgradeJob %s: %s after %s\n%s", jb.name, last.State, fmtDur(time.Since(begin)), indent(statusJSON(last)))
		if last.State != jb.want {
			j.dumpLog()
			j.dumpUpgradeLog()
			t.Fatalf("NodeUpgradeJob %s ended %s, want %s", jb.name, last.State, jb.want)
		}
		if len(last.Status) != 1 || last.Status[0].NodeName != j.node {
			t.Fatalf("NodeUpgradeJob %s: node statuses %s, want one for %s", jb.name, statusJSON(last), j.node)
		}
		ns := last.Status[0]
		if jb.want == fsmv1.TaskFailed && (ns.Event != "Rollback" || ns.Action != fsmv1.ActionSuccess || !strings.Contains(ns.Reason, "rolled back to v0.2.0")) {
			t.Fatalf("NodeUpgradeJob %s: node status %s, want a successful Rollback event with the upgrade's failure as its reason", jb.name, statusJSON(last))
		}
		eventually(t, readyBound, "node Ready after "+jb.name, j.c.nodeReady(j.node, begin))
		j.runsKubeEdge(jb.kubeedge)
		t.Logf("NodeUpgradeJob %s: node %s Ready on KubeEdge %s", jb.name, j.node, jb.kubeedge)
	}
}

// poll calls f until it reports done or bound passes.
func poll(bound time.Duration, f func() (bool, error)) bool {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if ok, _ := f(); ok {
			return true
		}
		time.Sleep(2 * time.Second)
	}
	return false
}

func statusJSON(s opsv1.NodeUpgradeJobStatus) string {
	data, _ := json.MarshalIndent(s, "", "  ")
	return string(data)
}

// copyFile copies src to dst and returns dst's SHA-256 in hex.
func copyFile(t *testing.T, src, dst string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dumpUpgradeLog prints upgrade.log, where the upgrade's steps are told.
func (j *journey) dumpUpgradeLog() {
	data, err := os.ReadFile(j.h.drive(j.layout.LogDir + `\upgrade.log`))
	if err != nil {
		j.t.Logf("no upgrade log: %v", err)
		return
	}
	j.t.Logf("---- upgrade.log ----\n%s", data)
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
