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

	opsv1 "github.com/kubeedge/api/apis/operations/v1alpha2"
	kubeedgeclient "github.com/kubeedge/api/client/clientset/versioned"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

const upgradeBound = 8 * time.Minute

// TestWindowsUpgrade upgrades a joined Windows node in place with
// `edgecore.exe upgrade --package`, the way an operator does on the host:
// to the same code released again as the next minor version
// (UPGRADE_GOOD_VERSION, v0.3.0 for v0.2.0), then to the one after it
// whose binary fails at once (the node must come back on the first), then
// back to this build's VERSION with `edgecore.exe rollback`. After each, the node is Ready on the
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
	// A pod runs through every upgrade and rollback, in its container.
	j.carried = j.runPod("upgraded")
	base, goodKE, badKE := mustEnv(t, "KUBEEDGE_VERSION"), mustEnv(t, "UPGRADE_GOOD_KUBEEDGE"), mustEnv(t, "UPGRADE_BAD_KUBEEDGE")
	version, goodV, badV := mustEnv(t, "VERSION"), mustEnv(t, "UPGRADE_GOOD_VERSION"), mustEnv(t, "UPGRADE_BAD_VERSION")
	j.runsKubeEdge(base)

	steps := []struct {
		args     []string
		code     int
		result   string
		kubeedge string
	}{
		{[]string{"upgrade", "--package", winPath(good), "--timeout", "3m"}, 0, "result=success action=upgrade from=" + version + " to=" + goodV, goodKE},
		{[]string{"upgrade", "--package", winPath(bad), "--timeout", "2m"}, 2, "result=rolled-back action=upgrade from=" + goodV + " to=" + badV, goodKE},
		{[]string{"rollback"}, 0, "result=success action=rollback from=" + goodV + " to=" + version, base},
	}
	for _, s := range steps {
		offset := fileSize(h.drive(j.layout.LogFile))
		r := h.edgecore(t, upgradeBound, s.args...)
		t.Logf("edgecore.exe %s: exit %d after %s\n%s", strings.Join(s.args, " "), r.code, fmtDur(r.duration), indent(r.out))
		if r.code != s.code || !strings.Contains(lastLine(r.out), s.result) {
			j.dumpLog()
			fatalf(t, "edgecore.exe %s: exit %d and last line %q; want exit %d and %q", s.args[0], r.code, lastLine(r.out), s.code, s.result)
		}
		j.backAfter(offset, s.args[0])
		j.runsKubeEdge(s.kubeedge)
		t.Logf("%s: %s in %s, node Ready on KubeEdge %s", s.args[0], s.result, fmtDur(r.duration), s.kubeedge)
	}
	j.upgradeFromCloud(good, bad, goodV, goodKE, badKE)
	wantCreated(t, j.fakecri.log, "the upgrades and rollbacks", map[string]created{"default/upgraded": {1, 1}})
}

// runPod runs a pod on the journey's node and returns its container as
// containerOf reports it: the pod a later event must leave alone.
func (j *journey) runPod(name string) carriedPod {
	j.t.Helper()
	e := &edge{os: "windows", name: j.node}
	e.createPod(j.t, j.c, name)
	eventually(j.t, podBound, "pod "+name+" Running", j.c.podRunning(name))
	return carriedPod{name: name, container: j.c.containerOf(j.t, name)}
}

// carriedPod is a pod that events on the node must leave in its container.
type carriedPod struct{ name, container string }

// backAfter checks the node after an event that replaced its edgecore
// process (an upgrade, a rollback, a configuration applied or rolled
// back), from the start of the process that runs now (the last start
// line in the service log after offset, where the log ended before the
// event): the node is Ready with a heartbeat that process sent (timeReady:
// not a status of the process before that cloudcore stamped late), and
// that kubelet found the carried pod's container in the runtime and left
// it there. It returns the process's start.
func (j *journey) backAfter(offset int64, event string) time.Time {
	j.t.Helper()
	started := startedAt(j.t, j.h.drive(j.layout.LogFile), offset)
	took, _, seen := j.c.timeReady(j.t, j.node, started)
	j.t.Logf("node Ready after %s: %s after the new edgecore started; Ready seen: %s", event, fmtDur(took), strings.Join(seen, ", "))
	if p := j.carried; p.name != "" {
		keptRunning(j.t, j.fakecri.log, p.name, p.container, started, event)
		j.c.sameContainer(j.t, p.name, p.container, event)
	}
	return started
}

// upgradeFromCloud drives the node's upgrade from the cloud the way the
// docs/upgrades.md tells an operator to: upgrade.yaml beside the configuration names
// a package repository (here a directory of this machine, as a file share
// would be), and NodeUpgradeJobs created with client-go name the version.
// cloudcore sends a job only to nodes whose KubeEdge version is older than
// spec.version, so the releases are published under the KubeEdge version
// they are stamped with: goodKE (the good one) and badKE (whose binary
// exits at once). The jobs are operations/v1alpha2, what cloudcore v1.23
// serves by default. The first job carries the package's digest; the
// second none, so the node takes it from the SHA256SUMS beside the
// packages.
func (j *journey) upgradeFromCloud(good, bad, goodV, goodKE, badKE string) {
	t := j.t
	repo := t.TempDir()
	sums, digest := "", ""
	for _, p := range []struct{ zip, version string }{{good, goodKE}, {bad, badKE}} {
		name := "edgecore-" + p.version + "-windows-amd64.zip"
		sum := copyFile(t, p.zip, filepath.Join(repo, name))
		sums += sum + "  " + name + "\n"
		if p.zip == good {
			digest = "sha256:" + sum
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "SHA256SUMS"), []byte(sums), 0o644); err != nil {
		fatal(t, err)
	}
	settings := "repository: '" + winPath(repo) + `\edgecore-{version}-windows-amd64.zip'` + "\nhealthTimeout: 3m\n"
	if err := os.WriteFile(j.h.drive(upgrade.SettingsPath(j.layout.GOOS, j.layout.ConfigFile)), []byte(settings), 0o644); err != nil {
		fatal(t, err)
	}
	j.c.startControllerManager(t)
	client, err := kubeedgeclient.NewForConfig(j.c.rest)
	if err != nil {
		fatal(t, err)
	}
	// A rolled-back upgrade ends as upstream's own nodes end it: the
	// Upgrade action False with the reason, then RollBack True, which is
	// the node task's last action (phase Successful), and the node back on
	// the version it ran.
	// The first job asks for confirmation: the node stops at
	// WaitingConfirmation until `edgecore.exe upgrade confirm` on the host.
	jobs := []struct {
		name, version, digest string
		confirm               bool
		actions               []string
		kubeedge              string
	}{
		{"windows-to-" + goodKE, goodKE, digest, true, []string{"Check=True", "WaitingConfirmation=True", "BackUp=True", "Upgrade=True"}, goodKE},
		{"windows-to-" + badKE, badKE, "", false, []string{"Check=True", "WaitingConfirmation=True", "BackUp=True", "Upgrade=False", "RollBack=True"}, goodKE},
	}
	for _, jb := range jobs {
		begin := time.Now()
		offset := fileSize(j.h.drive(j.layout.LogFile))
		timeout := uint32(600)
		job := &opsv1.NodeUpgradeJob{
			ObjectMeta: metav1.ObjectMeta{Name: jb.name},
			Spec: opsv1.NodeUpgradeJobSpec{
				Version: jb.version, NodeNames: []string{j.node}, TimeoutSeconds: &timeout, RequireConfirmation: jb.confirm,
			},
		}
		if jb.digest != "" {
			job.Spec.ImageDigestGetter = &opsv1.ImageDigestGetter{AMD64: jb.digest}
		}
		if _, err := client.OperationsV1alpha2().NodeUpgradeJobs().Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
			fatalf(t, "create NodeUpgradeJob %s: %v", jb.name, err)
		}
		var last opsv1.NodeUpgradeJobStatus
		if jb.confirm {
			j.confirmUpgrade(client, jb.name, begin)
		}
		done := func() (bool, error) {
			got, err := client.OperationsV1alpha2().NodeUpgradeJobs().Get(context.Background(), jb.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = got.Status
			for _, ns := range got.Status.NodeStatus {
				if ns.Phase == opsv1.NodeTaskPhaseSuccessful || ns.Phase == opsv1.NodeTaskPhaseFailure {
					return true, nil
				}
			}
			return false, fmt.Errorf("phase %q", got.Status.Phase)
		}
		if !poll(upgradeBound, done) {
			j.dumpLog()
			j.dumpUpgradeLog()
			fatalf(t, "NodeUpgradeJob %s did not end within %s; status %s", jb.name, upgradeBound, statusJSON(last))
		}
		t.Logf("NodeUpgradeJob %s: ended after %s\n%s", jb.name, fmtDur(time.Since(begin)), indent(statusJSON(last)))
		fmt.Printf("e2e figures (windows edge): NodeUpgradeJob %s (confirmation %v) ended after %s\n", jb.name, jb.confirm, fmtDur(time.Since(begin)))
		if len(last.NodeStatus) != 1 || last.NodeStatus[0].NodeName != j.node {
			fatalf(t, "NodeUpgradeJob %s: node statuses %s, want one for %s", jb.name, statusJSON(last), j.node)
		}
		ns := last.NodeStatus[0]
		var flow []string
		for _, a := range ns.ActionFlow {
			flow = append(flow, string(a.Action)+"="+string(a.Status))
		}
		if strings.Join(flow, " ") != strings.Join(jb.actions, " ") || ns.Phase != opsv1.NodeTaskPhaseSuccessful {
			j.dumpLog()
			j.dumpUpgradeLog()
			fatalf(t, "NodeUpgradeJob %s: node phase %s, actions %v; want Successful, %v", jb.name, ns.Phase, flow, jb.actions)
		}
		// The versions the cloud shows are the job's own terms, KubeEdge
		// versions: the current one is what the node runs now.
		if ns.CurrentVersion != jb.kubeedge {
			errorf(t, "NodeUpgradeJob %s: currentVersion %q (historicVersion %q), want %s, the KubeEdge version the node runs", jb.name, ns.CurrentVersion, ns.HistoricVersion, jb.kubeedge)
		}
		if len(jb.actions) == 5 && !strings.Contains(ns.ActionFlow[3].Reason, "rolled back to "+goodV) {
			fatalf(t, "NodeUpgradeJob %s: the Upgrade action's reason %q does not say the node was rolled back", jb.name, ns.ActionFlow[3].Reason)
		}
		j.backAfter(offset, "NodeUpgradeJob "+jb.name)
		j.runsKubeEdge(jb.kubeedge)
		t.Logf("NodeUpgradeJob %s: node %s Ready on KubeEdge %s", jb.name, j.node, jb.kubeedge)
	}
}

// confirmUpgrade waits until the job's status shows the node waiting for
// confirmation, checks that it stays there, and confirms it on the host
// with `edgecore.exe upgrade confirm`, as the README tells an operator.
func (j *journey) confirmUpgrade(client kubeedgeclient.Interface, name string, begin time.Time) {
	t := j.t
	var last opsv1.NodeUpgradeJobStatus
	waiting := func() (bool, error) {
		got, err := client.OperationsV1alpha2().NodeUpgradeJobs().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = got.Status
		for _, ns := range got.Status.NodeStatus {
			if n := len(ns.ActionFlow); n > 0 && ns.ActionFlow[n-1].Action == opsv1.NodeUpgradeJobActionWaitingConfirmation &&
				ns.ActionFlow[n-1].Status == metav1.ConditionTrue && ns.Phase == opsv1.NodeTaskPhaseInProgress {
				return true, nil
			}
		}
		return false, nil
	}
	if !poll(upgradeBound, waiting) {
		j.dumpLog()
		fatalf(t, "NodeUpgradeJob %s: the node never showed WaitingConfirmation; status %s", name, statusJSON(last))
	}
	shown := time.Since(begin)
	// Nothing goes on without the operator.
	time.Sleep(10 * time.Second)
	if ok, _ := waiting(); !ok {
		fatalf(t, "NodeUpgradeJob %s went on without a confirmation: %s", name, statusJSON(last))
	}
	t.Logf("NodeUpgradeJob %s: waits for confirmation after %s\n%s", name, fmtDur(shown), indent(statusJSON(last)))
	r := j.h.edgecore(t, time.Minute, "upgrade", "confirm", "--job", name)
	t.Logf("edgecore.exe upgrade confirm: exit %d after %s\n%s", r.code, fmtDur(r.duration), indent(r.out))
	if r.code != 0 || !strings.Contains(r.out, "edgecore took the confirmation") {
		j.dumpLog()
		fatalf(t, "edgecore.exe upgrade confirm: exit %d, output %q", r.code, r.out)
	}
	fmt.Printf("e2e figures (windows edge): NodeUpgradeJob %s showed WaitingConfirmation %s after it was created; edgecore.exe upgrade confirm took %s\n", name, fmtDur(shown), fmtDur(r.duration))
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
		fatal(t, err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		fatal(t, err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		fatal(t, err)
	}
	if err := out.Close(); err != nil {
		fatal(t, err)
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
