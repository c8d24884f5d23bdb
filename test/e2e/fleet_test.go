//go:build e2e && fleet

// The fleet (`make fleet`): many nodes against one loopback cloud, each
// with its own fake runtime and folders, taking the cloud's jobs the way a
// fleet of shop-floor hosts does. Not part of `make test`.

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	opsv1 "github.com/kubeedge/api/apis/operations/v1alpha2"
	kubeedgeclient "github.com/kubeedge/api/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// fleetJobBound bounds a job across the whole fleet: it catches a job that
// never ends, not a slow one (the time is printed).
const fleetJobBound = 20 * time.Minute

// fleetNode is one node of the fleet: a Linux build of our edgecore (e),
// our edgecore.exe as the service of a Wine host of its own (j), or the
// upstream reference edgecore on Linux (e, ref).
type fleetNode struct {
	name string
	kind string // "linux", "wine" or "reference"
	e    *edge
	j    *journey
	// bad: the repository this node's upgrade.yaml names publishes a
	// release that fails its health gate under the job's version.
	bad bool
	// before the jobs: the configuration file, the installed binary's
	// SHA-256 and the KubeEdge version the node reported.
	config   []byte
	binary   string
	kubeedge string
}

// cfgFile is the node's configuration file on this machine.
func (n *fleetNode) cfgFile() string {
	if n.j != nil {
		return n.j.h.drive(n.j.layout.ConfigFile)
	}
	return n.e.cfgPath
}

// binFile is the binary the node runs, on this machine.
func (n *fleetNode) binFile() string {
	if n.j != nil {
		return n.j.h.drive(n.j.h.exe)
	}
	return n.e.bin
}

// TestFleet starts FLEET_LINUX Linux builds of our edgecore and FLEET_WINE
// edgecore.exe services under Wine (each on a Wine host of its own),
// against one loopback cloud (etcd, kube-apiserver, the node lifecycle
// controller, cloudcore and KubeEdge's controller-manager), then:
//
//   - a NodeUpgradeJob across all of them with FLEET_CONCURRENCY and
//     FLEET_FAILURE_TOLERATE, while two Windows nodes (FLEET_BAD) fetch,
//     under the job's version, a release that fails its health gate: those
//     roll back, the other Windows nodes upgrade, the Linux builds refuse
//     at Check (they do not run as the Windows service an upgrade restarts);
//     the job ends as upstream's controller computes it, no node runs more
//     than the concurrency at once, and no node is left half-upgraded;
//   - a ConfigUpdateJob across all of them: the Windows nodes apply it and
//     come back with it, the Linux builds refuse it at Check;
//   - an ImagePrePullJob across all of them, and then the same three jobs
//     across FLEET_REF upstream reference nodes (bench-node's build of
//     upstream's edge/cmd/edgecore), which hand NodeUpgradeJobs and
//     ConfigUpdateJobs to keadm.
//
// It prints the times and cloudcore's message counts (its own log lines
// for each message it got from a node and sent to one), and keeps the
// table in FLEET_OUT.
func TestFleet(t *testing.T) {
	nLinux := fleetInt(t, "FLEET_LINUX", 16)
	nWine := fleetInt(t, "FLEET_WINE", 4)
	nRef := fleetInt(t, "FLEET_REF", 4)
	nBad := fleetInt(t, "FLEET_BAD", 2)
	concurrency := fleetInt(t, "FLEET_CONCURRENCY", 2)
	tolerate := os.Getenv("FLEET_FAILURE_TOLERATE")
	if tolerate == "" {
		tolerate = "0.8"
	}
	if _, err := strconv.ParseFloat(tolerate, 64); err != nil {
		fatalf(t, "FLEET_FAILURE_TOLERATE=%q: %v", tolerate, err)
	}
	if nBad > nWine {
		fatalf(t, "FLEET_BAD=%d is more than the FLEET_WINE=%d Windows nodes", nBad, nWine)
	}
	inotifyRoom(t, nLinux+nRef)
	goodZip, badZip := mustEnv(t, "UPGRADE_GOOD_ZIP"), mustEnv(t, "FLEET_BAD_ZIP")
	baseKE, goodKE := mustEnv(t, "KUBEEDGE_VERSION"), mustEnv(t, "UPGRADE_GOOD_KUBEEDGE")
	_, hostKubeEdge := os.Stat("/etc/kubeedge")

	whole := time.Now()
	c := startCluster(t)
	counts := c.countMessages(t)
	c.startControllerManager(t)
	client, err := kubeedgeclient.NewForConfig(c.rest)
	if err != nil {
		fatal(t, err)
	}
	var figures []string
	say := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		figures = append(figures, line)
		fmt.Printf("fleet figures: %s\n", line)
	}

	// The fleet joins: the Linux nodes start together, the Windows hosts
	// join one by one (each join waits for its node's certificates).
	begin := time.Now()
	mark := counts.mark()
	var ours []*fleetNode
	for i := 1; i <= nLinux; i++ {
		e := newNamedEdge(t, c, "linux", fmt.Sprintf("fleet-linux-%02d", i))
		takeJobs(t, e, 0)
		e.startEdgecore(t)
		ours = append(ours, &fleetNode{name: e.name, kind: "linux", e: e})
	}
	repoGood, repoBad := fleetRepo(t, goodZip, goodKE), fleetRepo(t, badZip, goodKE)
	for i := 1; i <= nWine; i++ {
		n := &fleetNode{name: fmt.Sprintf("fleet-win-%02d", i), kind: "wine", bad: i > nWine-nBad}
		n.j = c.fleetWindowsHost(t, n.name)
		repo := repoGood
		if n.bad {
			repo = repoBad
		}
		settings := "repository: '" + winPath(repo) + `\edgecore-{version}-windows-amd64.zip'` + "\nhealthTimeout: 2m\n"
		if err := os.WriteFile(n.j.h.drive(upgrade.SettingsPath(n.j.layout.GOOS, n.j.layout.ConfigFile)), []byte(settings), 0o644); err != nil {
			fatal(t, err)
		}
		ours = append(ours, n)
	}
	for _, n := range ours {
		eventually(t, readyBound, "node "+n.name+" Ready", c.nodeReady(n.name, time.Time{}))
	}
	joined := time.Since(begin)
	say("%d nodes (%d Linux builds, %d edgecore.exe services under Wine) joined and Ready in %s; cloudcore meanwhile: %s",
		len(ours), nLinux, nWine, fmtDur(joined), counts.since(mark))
	say("memory of the nodes' processes at Ready (RSS): %s", fleetMemory(ours))
	for _, n := range ours {
		n.snapshot(t, c)
	}

	// The NodeUpgradeJob across the fleet.
	mark = counts.mark()
	begin = time.Now()
	timeout := uint32(600)
	up := c.fleetUpgrade(t, client, "fleet-upgrade", goodKE, ours, int32(concurrency), tolerate, timeout)
	took := time.Since(begin)
	res := judgeUpgrade(t, up, ours, goodKE, tolerate)
	for _, n := range ours {
		n.notHalfUpgraded(t, c, res[n.name], baseKE, goodKE)
	}
	overlap := maxInFlight(up.NodeStatus)
	if overlap > concurrency {
		errorf(t, "NodeUpgradeJob fleet-upgrade: %d nodes were in flight at once (by their action times), more than its concurrency %d", overlap, concurrency)
	}
	say("NodeUpgradeJob across %d nodes (concurrency %d, failureTolerate %s): phase %s after %s; %s; at most %d nodes in flight at once; cloudcore meanwhile: %s",
		len(ours), concurrency, tolerate, up.Phase, fmtDur(took), tally(res), overlap, counts.since(mark))

	// The ConfigUpdateJob across the fleet.
	mark = counts.mark()
	begin = time.Now()
	for _, n := range ours {
		n.config = readOrFail(t, n.cfgFile())
	}
	cu := c.fleetConfigUpdate(t, client, "fleet-maxpods", names(ours), int32(concurrency), tolerate,
		map[string]string{"modules.edged.tailoredKubeletConfig.maxPods": "42"})
	took = time.Since(begin)
	cres := judgeConfigUpdate(t, c, cu, ours, tolerate)
	overlap = maxInFlight(configFlows(cu.NodeStatus))
	if overlap > concurrency {
		errorf(t, "ConfigUpdateJob fleet-maxpods: %d nodes were in flight at once (by their action times), more than its concurrency %d", overlap, concurrency)
	}
	say("ConfigUpdateJob across %d nodes (concurrency %d, failureTolerate %s): phase %s after %s; %s; at most %d nodes in flight at once; cloudcore meanwhile: %s",
		len(ours), concurrency, tolerate, cu.Phase, fmtDur(took), tally(cres), overlap, counts.since(mark))

	// An ImagePrePullJob across the fleet: every node pulls.
	mark = counts.mark()
	begin = time.Now()
	pp := c.fleetPrePull(t, client, "fleet-prepull", names(ours), int32(concurrency))
	took = time.Since(begin)
	pres := judgePrePull(t, pp, ours, true)
	say("ImagePrePullJob across %d nodes (concurrency %d): phase %s after %s; %s; cloudcore meanwhile: %s",
		len(ours), concurrency, pp.Phase, fmtDur(took), tally(pres), counts.since(mark))

	if hostKubeEdge != nil {
		if _, err := os.Stat("/etc/kubeedge"); err == nil {
			errorl(t, "/etc/kubeedge exists after the jobs and did not before: a Linux node wrote outside its own folders")
		}
	}

	// The upstream reference nodes, the same jobs.
	if nRef > 0 {
		var refs []*fleetNode
		begin = time.Now()
		mark = counts.mark()
		for i := 1; i <= nRef; i++ {
			e := newNamedEdge(t, c, "linux", fmt.Sprintf("fleet-ref-%02d", i))
			e.bin = mustEnv(t, "REF_EDGECORE_BIN")
			// Upstream's kubelet serves on readOnlyPort, on the node's
			// address, which all nodes of this host share (ours serves
			// the kubelet on a socket of its own folder).
			takeJobs(t, e, int32(freePort(t)))
			e.startEdgecore(t)
			refs = append(refs, &fleetNode{name: e.name, kind: "reference", e: e})
		}
		for _, n := range refs {
			eventually(t, readyBound, "reference node "+n.name+" Ready", c.nodeReady(n.name, time.Time{}))
			n.snapshot(t, c)
		}
		say("%d upstream reference nodes (Linux) joined and Ready in %s; cloudcore meanwhile: %s", nRef, fmtDur(time.Since(begin)), counts.since(mark))
		refTimeout := uint32(120)
		mark = counts.mark()
		begin = time.Now()
		up := c.fleetUpgrade(t, client, "ref-upgrade", goodKE, refs, int32(concurrency), tolerate, refTimeout)
		say("reference nodes, NodeUpgradeJob: phase %s after %s; %s; cloudcore meanwhile: %s",
			up.Phase, fmtDur(time.Since(begin)), refOutcomes(t, c, refs, up.NodeStatus, baseKE), counts.since(mark))
		mark = counts.mark()
		begin = time.Now()
		cu := c.fleetConfigUpdate(t, client, "ref-maxpods", names(refs), int32(concurrency), tolerate,
			map[string]string{"modules.edged.tailoredKubeletConfig.maxPods": "42"})
		cst := configFlows(cu.NodeStatus)
		say("reference nodes, ConfigUpdateJob: phase %s after %s; %s; cloudcore meanwhile: %s",
			cu.Phase, fmtDur(time.Since(begin)), refOutcomes(t, c, refs, cst, baseKE), counts.since(mark))
		mark = counts.mark()
		begin = time.Now()
		pp := c.fleetPrePull(t, client, "ref-prepull", names(refs), int32(concurrency))
		pres := judgePrePull(t, pp, refs, true)
		say("reference nodes, ImagePrePullJob: phase %s after %s; %s; cloudcore meanwhile: %s",
			pp.Phase, fmtDur(time.Since(begin)), tally(pres), counts.since(mark))
	}

	say("the whole run, the cloud's start included: %s", fmtDur(time.Since(whole)))
	table := fmt.Sprintf("fleet run of %s on %s (%d CPUs): FLEET_LINUX=%d FLEET_WINE=%d FLEET_BAD=%d FLEET_REF=%d FLEET_CONCURRENCY=%d FLEET_FAILURE_TOLERATE=%s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), cpuModel(), runtime.NumCPU(), nLinux, nWine, nBad, nRef, concurrency, tolerate)
	for _, f := range figures {
		table += "- " + f + "\n"
	}
	fmt.Print(table)
	if out := os.Getenv("FLEET_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			errorl(t, err)
		}
	}
}

// inotifyPerLinuxNode is about how many inotify instances a Linux node's
// kubelet holds (cAdvisor's, the volume plugin prober's, the static pod
// folder's watch...): a run of 40 Linux nodes on a host with the default
// fs.inotify.max_user_instances of 128 started 25, and the kubelets of
// the others failed to start cAdvisor ("inotify_init: too many open
// files"), which ends their process before the node registers.
const inotifyPerLinuxNode = 5

// inotifyRoom refuses a fleet the host's inotify limit cannot hold, with
// the fix, rather than 15 nodes that never register.
func inotifyRoom(t *testing.T, linuxNodes int) {
	t.Helper()
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
	if err != nil {
		return
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return
	}
	inUse := 0
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == "anon_inode:inotify" {
			inUse++
		}
	}
	if need := linuxNodes * inotifyPerLinuxNode; inUse+need > limit {
		fatalf(t, "%d Linux nodes (FLEET_LINUX + FLEET_REF) need about %d inotify instances (%d each) and %d are in use, more than fs.inotify.max_user_instances=%d allows: "+
			"raise it (sysctl -w fs.inotify.max_user_instances=%d) or run fewer Linux nodes", linuxNodes, need, inotifyPerLinuxNode, inUse, limit, 2*(inUse+need))
	}
}

// fleetWindowsHost joins a Windows host of its own as node name: our
// edgecore.exe installed under C:\Program Files\edgecore, the fake runtime
// on containerd's pipe, `edgecore.exe join` with the node's name, which
// installs and starts the service.
func (c *cluster) fleetWindowsHost(t *testing.T, name string) *journey {
	t.Helper()
	h := newWinHost(t)
	h.install(t, `C:\Program Files\edgecore`)
	j := &journey{t: t, c: c, h: h, token: c.token(t), layout: config.NewLayout(config.Host{GOOS: "windows"})}
	j.fakecri = j.startFakeCRI("fakecri")
	j.node = name
	args := append(j.args(joinCommand), "--edgenode-name", name)
	if got := j.joinedNode(j.run(args, 0).out); got != name {
		fatalf(t, "join named the node %s, not %s", got, name)
	}
	return j
}

// takeJobs turns on a Linux node's taskManager, the module that answers
// the cloud's jobs: `edgecore config` leaves it off on Linux, as upstream's
// defaults do, and a node without it never answers a job, which holds one
// of the job's concurrency slots in cloudcore until the job times out.
// A readOnlyPort other than 0 replaces the kubelet's.
func takeJobs(t *testing.T, e *edge, readOnlyPort int32) {
	t.Helper()
	cfg, _, err := config.Load(e.cfgPath, config.Host{GOOS: e.os})
	if err != nil {
		fatal(t, err)
	}
	cfg.Modules.TaskManager.Enable = true
	if readOnlyPort != 0 {
		cfg.Modules.Edged.TailoredKubeletConfig.ReadOnlyPort = readOnlyPort
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(e.cfgPath, data, 0o600); err != nil {
		fatal(t, err)
	}
}

// fleetRepo is a package repository (a folder, as a file share is) that
// publishes zip under the job's version, with its SHA256SUMS.
func fleetRepo(t *testing.T, zip, version string) string {
	t.Helper()
	repo := t.TempDir()
	name := "edgecore-" + version + "-windows-amd64.zip"
	sum := copyFile(t, zip, filepath.Join(repo, name))
	if err := os.WriteFile(filepath.Join(repo, "SHA256SUMS"), []byte(sum+"  "+name+"\n"), 0o644); err != nil {
		fatal(t, err)
	}
	return repo
}

// snapshot records what a job must leave as it is unless it completes:
// the configuration, the binary and the KubeEdge version the node reports.
func (n *fleetNode) snapshot(t *testing.T, c *cluster) {
	t.Helper()
	n.config = readOrFail(t, n.cfgFile())
	n.binary = sha256File(t, n.binFile())
	n.kubeedge = reportedKubeEdge(t, c, n.name)
}

func readOrFail(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		fatal(t, err)
	}
	return data
}

func sha256File(t *testing.T, p string) string {
	t.Helper()
	sum := sha256.Sum256(readOrFail(t, p))
	return hex.EncodeToString(sum[:])
}

// reportedKubeEdge is the KubeEdge version in the node's kubeletVersion
// (v1.32.10-kubeedge-v1.23.1).
func reportedKubeEdge(t *testing.T, c *cluster, name string) string {
	t.Helper()
	n, err := c.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		fatal(t, err)
	}
	_, ke, ok := strings.Cut(n.Status.NodeInfo.KubeletVersion, "-kubeedge-")
	if !ok {
		fatalf(t, "node %s reports kubeletVersion %q, with no KubeEdge version", name, n.Status.NodeInfo.KubeletVersion)
	}
	return ke
}

func names(ns []*fleetNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.name)
	}
	return out
}

// fleetUpgrade creates a NodeUpgradeJob for the nodes and waits until the
// controller has ended every node's task and the job's phase is no longer
// InProgress.
func (c *cluster) fleetUpgrade(t *testing.T, client kubeedgeclient.Interface, name, version string, nodes []*fleetNode,
	concurrency int32, tolerate string, timeout uint32) opsv1.NodeUpgradeJobStatus {
	t.Helper()
	job := &opsv1.NodeUpgradeJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: opsv1.NodeUpgradeJobSpec{Version: version, NodeNames: names(nodes), TimeoutSeconds: &timeout,
			Concurrency: concurrency, FailureTolerate: tolerate,
			// keadm's own default image, which upstream's edge pulls as
			// <image>:<version> to take keadm from: in v1alpha2 nothing in
			// the cloud fills it in, and without it upstream's nodes fail
			// the Check pulling ":v1.23.2". Ours does not read it.
			Image: "kubeedge/installation-package"},
	}
	if _, err := client.OperationsV1alpha2().NodeUpgradeJobs().Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		fatalf(t, "create NodeUpgradeJob %s: %v", name, err)
	}
	return untilJobEnds(t, "NodeUpgradeJob", name, len(nodes), client.OperationsV1alpha2().NodeUpgradeJobs().Get,
		func(j *opsv1.NodeUpgradeJob) opsv1.NodeUpgradeJobStatus { return j.Status })
}

func (c *cluster) fleetConfigUpdate(t *testing.T, client kubeedgeclient.Interface, name string, nodes []string,
	concurrency int32, tolerate string, fields map[string]string) opsv1.ConfigUpdateJobStatus {
	t.Helper()
	timeout := uint32(600)
	job := &opsv1.ConfigUpdateJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: opsv1.ConfigUpdateJobSpec{NodeNames: nodes, UpdateFields: fields, TimeoutSeconds: &timeout,
			Concurrency: concurrency, FailureTolerate: tolerate},
	}
	if _, err := client.OperationsV1alpha2().ConfigUpdateJobs().Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		fatalf(t, "create ConfigUpdateJob %s: %v", name, err)
	}
	return untilJobEnds(t, "ConfigUpdateJob", name, len(nodes), client.OperationsV1alpha2().ConfigUpdateJobs().Get,
		func(j *opsv1.ConfigUpdateJob) opsv1.ConfigUpdateJobStatus { return j.Status })
}

func (c *cluster) fleetPrePull(t *testing.T, client kubeedgeclient.Interface, name string, nodes []string, concurrency int32) opsv1.ImagePrePullJobStatus {
	t.Helper()
	job := &opsv1.ImagePrePullJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: opsv1.ImagePrePullJobSpec{ImagePrePullTemplate: opsv1.ImagePrePullTemplate{
			Images: []string{"registry.example.com/fleet/app:1"}, NodeNames: nodes, RetryTimes: 1, Concurrency: concurrency,
		}},
	}
	if _, err := client.OperationsV1alpha2().ImagePrePullJobs().Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		fatalf(t, "create ImagePrePullJob %s: %v", name, err)
	}
	return untilJobEnds(t, "ImagePrePullJob", name, len(nodes), client.OperationsV1alpha2().ImagePrePullJobs().Get,
		func(j *opsv1.ImagePrePullJob) opsv1.ImagePrePullJobStatus { return j.Status })
}

// untilJobEnds polls a job through get until each of its n node tasks has
// ended and the job's phase is Completed or Failure, and returns the job's
// last status as status takes it out of the job.
func untilJobEnds[J, S any](t *testing.T, kind, name string, n int,
	get func(context.Context, string, metav1.GetOptions) (J, error), status func(J) S) S {
	t.Helper()
	var last S
	if !poll(fleetJobBound, func() (bool, error) {
		got, err := get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = status(got)
		job, nodes, err := jobPhases(last)
		if err != nil {
			return false, err
		}
		return len(nodes) == n && allEnded(nodes) && (job == opsv1.JobPhaseCompleted || job == opsv1.JobPhaseFailure), nil
	}) {
		fatalf(t, "%s %s did not end within %s; status %s", kind, name, fleetJobBound, jsonOf(last))
	}
	t.Logf("%s %s ended:\n%s", kind, name, indent(jsonOf(last)))
	return last
}

// jobPhases reads a job's phase and its node tasks' phases from its status
// by the JSON shape the three kinds' statuses share (phase,
// nodeStatus[].phase), so one wait serves NodeUpgradeJob, ConfigUpdateJob
// and ImagePrePullJob, whose node task types differ.
func jobPhases(status any) (opsv1.JobPhase, []opsv1.NodeTaskPhase, error) {
	data, err := json.Marshal(status)
	if err != nil {
		return "", nil, err
	}
	var s struct {
		Phase      opsv1.JobPhase `json:"phase"`
		NodeStatus []struct {
			Phase opsv1.NodeTaskPhase `json:"phase"`
		} `json:"nodeStatus"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return "", nil, err
	}
	var nodes []opsv1.NodeTaskPhase
	for _, ns := range s.NodeStatus {
		nodes = append(nodes, ns.Phase)
	}
	return s.Phase, nodes, nil
}

func allEnded(phases []opsv1.NodeTaskPhase) bool {
	for _, p := range phases {
		if p != opsv1.NodeTaskPhaseSuccessful && p != opsv1.NodeTaskPhaseFailure && p != opsv1.NodeTaskPhaseUnknown {
			return false
		}
	}
	return true
}

// Outcomes of a node's task, as the tables name them.
const (
	outUpgraded   = "upgraded"
	outRolledBack = "rolled back"
	outRefused    = "refused at Check"
	outApplied    = "applied"
	outPulled     = "pulled"
)

// expectedJobPhase is the job's phase as upstream's controller-manager
// computes it once no node task is in progress (nodetask's
// CalculatePhaseWithCounts): Failure when the failed share of the nodes
// (Failure or Unknown), rounded to two decimals, exceeds failureTolerate
// (0 when unset), else Completed. A node whose upgrade was rolled back
// ends Successful (its last action, RollBack, succeeded).
func expectedJobPhase(failed, total int, tolerate string) opsv1.JobPhase {
	tol := 0.0
	if tolerate != "" {
		tol, _ = strconv.ParseFloat(tolerate, 64)
	}
	share := float64(failed) / float64(total)
	share = float64(int(share*100+0.5)) / 100
	if failed > 0 && share > tol {
		return opsv1.JobPhaseFailure
	}
	return opsv1.JobPhaseCompleted
}

func flowOf(af []opsv1.NodeUpgradeJobActionStatus) string {
	var flow []string
	for _, a := range af {
		flow = append(flow, string(a.Action)+"="+string(a.Status))
	}
	return strings.Join(flow, " ")
}

// eachNodeTask judges each of the nodes with its task in a job's status,
// found by the task's node name, and fails the test for a node the job
// has no task of.
func eachNodeTask[T any](t *testing.T, kind string, tasks []T, nodeName func(T) string, nodes []*fleetNode, judge func(*fleetNode, T)) {
	t.Helper()
	byName := map[string]T{}
	for _, s := range tasks {
		byName[nodeName(s)] = s
	}
	for _, n := range nodes {
		s, ok := byName[n.name]
		if !ok {
			errorf(t, "%s: no status for node %s", kind, n.name)
			continue
		}
		judge(n, s)
	}
}

// taskFailed holds for a node task that counts against the job's
// failureTolerate: Failure, or Unknown (timed out).
func taskFailed(p opsv1.NodeTaskPhase) bool {
	return p == opsv1.NodeTaskPhaseFailure || p == opsv1.NodeTaskPhaseUnknown
}

// wantJobPhase checks a job's phase against upstream's rule
// (expectedJobPhase) for failed of total node tasks.
func wantJobPhase(t *testing.T, kind string, phase opsv1.JobPhase, reason string, failed, total int, tolerate string) {
	t.Helper()
	if want := expectedJobPhase(failed, total, tolerate); phase != want {
		errorf(t, "%s: phase %s (%s); upstream's controller makes it %s for %d failed of %d with failureTolerate %s",
			kind, phase, reason, want, failed, total, tolerate)
	}
}

// dumpLogs prints the edgecore and upgrade logs of a node that runs as a
// Windows service under Wine (n.j), whose task was not what it should be;
// for the other nodes it prints nothing.
func (n *fleetNode) dumpLogs() {
	if n.j != nil {
		n.j.dumpLog()
		n.j.dumpUpgradeLog()
	}
}

// judgeUpgrade checks each node's task against what the node is: a good
// Windows node upgraded, a bad one rolled back (both Successful), a Linux
// build refused at Check because it does not run as the Windows service;
// and the job's phase against upstream's rule. It returns each node's
// outcome.
func judgeUpgrade(t *testing.T, st opsv1.NodeUpgradeJobStatus, nodes []*fleetNode, version, tolerate string) map[string]string {
	t.Helper()
	out := map[string]string{}
	failed := 0
	eachNodeTask(t, "NodeUpgradeJob", st.NodeStatus, func(s opsv1.NodeUpgradeJobNodeTaskStatus) string { return s.NodeName }, nodes, func(n *fleetNode, s opsv1.NodeUpgradeJobNodeTaskStatus) {
		flow := flowOf(s.ActionFlow)
		var want, outcome string
		wantPhase := opsv1.NodeTaskPhaseSuccessful
		switch {
		case n.kind == "linux":
			want, outcome, wantPhase = "Check=False", outRefused, opsv1.NodeTaskPhaseFailure
		case n.bad:
			want, outcome = "Check=True WaitingConfirmation=True BackUp=True Upgrade=False RollBack=True", outRolledBack
		default:
			want, outcome = "Check=True WaitingConfirmation=True BackUp=True Upgrade=True", outUpgraded
		}
		if taskFailed(s.Phase) {
			failed++
		}
		if flow != want || s.Phase != wantPhase {
			errorf(t, "NodeUpgradeJob: node %s (%s, bad release %v): phase %s, actions %q; want %s, %q\n%s",
				n.name, n.kind, n.bad, s.Phase, flow, wantPhase, want, jsonOf(s))
			n.dumpLogs()
			return
		}
		switch outcome {
		case outRefused:
			if r := s.ActionFlow[0].Reason; !strings.Contains(r, "does not run as the Windows service") {
				errorf(t, "NodeUpgradeJob: node %s refused with %q, which does not say it is not the Windows service", n.name, r)
			}
		case outRolledBack:
			if r := s.ActionFlow[3].Reason; !strings.Contains(r, "rolled back") {
				errorf(t, "NodeUpgradeJob: node %s: the Upgrade's reason %q does not say it was rolled back", n.name, r)
			}
		}
		out[n.name] = outcome
	})
	wantJobPhase(t, "NodeUpgradeJob", st.Phase, st.Reason, failed, len(nodes), tolerate)
	return out
}

// notHalfUpgraded checks a node after the NodeUpgradeJob: wholly on the
// new release (binary, journal, reported version, Ready with a heartbeat
// of the new process) or wholly on the one before, with the configuration
// it had either way.
func (n *fleetNode) notHalfUpgraded(t *testing.T, c *cluster, outcome, baseKE, goodKE string) {
	t.Helper()
	wantKE := baseKE
	if outcome == outUpgraded {
		wantKE = goodKE
	}
	if !bytes.Equal(readOrFail(t, n.cfgFile()), n.config) {
		errorf(t, "node %s (%s): the configuration changed in the NodeUpgradeJob", n.name, outcome)
	}
	eventually(t, readyBound, "node "+n.name+" reports KubeEdge "+wantKE+" and is Ready", func() (bool, error) {
		if ke := reportedKubeEdge(t, c, n.name); ke != wantKE {
			return false, fmt.Errorf("reports %s", ke)
		}
		return c.nodeReady(n.name, time.Time{})()
	})
	bin := sha256File(t, n.binFile())
	if n.j == nil {
		if bin != n.binary {
			errorf(t, "node %s: its binary changed", n.name)
		}
		return
	}
	data, err := os.ReadFile(n.j.h.drive(n.j.layout.UpgradeDir + `\journal.json`))
	if err != nil {
		errorf(t, "node %s: no upgrade journal after the NodeUpgradeJob: %v", n.name, err)
		return
	}
	var jr upgrade.Journal
	if err := json.Unmarshal(data, &jr); err != nil {
		errorf(t, "node %s: the upgrade journal does not parse: %v\n%s", n.name, err, data)
		return
	}
	wantOutcome := upgrade.OutcomeSuccess
	if outcome == outRolledBack {
		wantOutcome = upgrade.OutcomeRolledBack
		if bin != n.binary {
			errorf(t, "node %s was rolled back, yet its binary is not the one it ran before", n.name)
		}
	} else if bin == n.binary {
		errorf(t, "node %s upgraded, yet its binary is the one it ran before", n.name)
	}
	if !jr.Done() || jr.Outcome != wantOutcome || jr.Job == nil || !jr.Job.Reported {
		errorf(t, "node %s (%s): journal phase %s, outcome %s, job %+v; want done, %s, reported", n.name, outcome, jr.Phase, jr.Outcome, jr.Job, wantOutcome)
	}
	// The process that runs now is the one the journal ended with: it
	// started after the gate began and reports heartbeats since.
	if !jr.GateStart.IsZero() {
		eventually(t, readyBound, "node "+n.name+" Ready with a heartbeat after its gate began", c.nodeReady(n.name, jr.GateStart))
	}
}

// judgeConfigUpdate checks each node's task: the Windows services apply
// the update and come back Ready with 42 pods, the Linux builds refuse it
// at Check with the file as it was; and the job's phase.
func judgeConfigUpdate(t *testing.T, c *cluster, st opsv1.ConfigUpdateJobStatus, nodes []*fleetNode, tolerate string) map[string]string {
	t.Helper()
	out := map[string]string{}
	failed := 0
	eachNodeTask(t, "ConfigUpdateJob", st.NodeStatus, func(s opsv1.ConfigUpdateJobNodeTaskStatus) string { return s.NodeName }, nodes, func(n *fleetNode, s opsv1.ConfigUpdateJobNodeTaskStatus) {
		var flow []string
		for _, a := range s.ActionFlow {
			flow = append(flow, string(a.Action)+"="+string(a.Status))
		}
		if taskFailed(s.Phase) {
			failed++
		}
		want, wantPhase, outcome, pods := "Check=True BackUp=True Update=True", opsv1.NodeTaskPhaseSuccessful, outApplied, "42"
		if n.kind == "linux" {
			want, wantPhase, outcome, pods = "Check=False", opsv1.NodeTaskPhaseFailure, outRefused, "110"
		}
		if strings.Join(flow, " ") != want || s.Phase != wantPhase {
			errorf(t, "ConfigUpdateJob: node %s (%s): phase %s, actions %v; want %s, %s\n%s", n.name, n.kind, s.Phase, flow, wantPhase, want, jsonOf(s))
			n.dumpLogs()
			return
		}
		text := readOrFail(t, n.cfgFile())
		if outcome == outRefused {
			if !strings.Contains(s.ActionFlow[0].Reason, "does not run as the Windows service") {
				errorf(t, "ConfigUpdateJob: node %s refused with %q, which does not say it is not the Windows service", n.name, s.ActionFlow[0].Reason)
			}
			if !bytes.Equal(text, n.config) {
				errorf(t, "ConfigUpdateJob: node %s refused it, yet its file changed", n.name)
			}
		} else if !strings.Contains(string(text), "maxPods: 42") {
			errorf(t, "ConfigUpdateJob: node %s applied it, yet its file lacks maxPods: 42", n.name)
		}
		// What the node reports: Ready, with the capacity its file says.
		eventually(t, readyBound, "node "+n.name+" Ready with capacity "+pods+" pods", func() (bool, error) {
			nd, err := c.client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got := nd.Status.Capacity[corev1.ResourcePods]
			if got.Cmp(resource.MustParse(pods)) != 0 {
				return false, fmt.Errorf("capacity pods %s", got.String())
			}
			return readyAfter(nd, time.Time{})
		})
		out[n.name] = outcome
	})
	wantJobPhase(t, "ConfigUpdateJob", st.Phase, st.Reason, failed, len(nodes), tolerate)
	return out
}

// judgePrePull wants every node to have pulled the image.
func judgePrePull(t *testing.T, st opsv1.ImagePrePullJobStatus, nodes []*fleetNode, wantPulled bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachNodeTask(t, "ImagePrePullJob", st.NodeStatus, func(s opsv1.ImagePrePullNodeTaskStatus) string { return s.NodeName }, nodes, func(n *fleetNode, s opsv1.ImagePrePullNodeTaskStatus) {
		if s.Phase != opsv1.NodeTaskPhaseSuccessful {
			if wantPulled {
				errorf(t, "ImagePrePullJob: node %s (%s): phase %s\n%s", n.name, n.kind, s.Phase, jsonOf(s))
			}
			out[n.name] = string(s.Phase)
			return
		}
		out[n.name] = outPulled
	})
	if wantPulled && st.Phase != opsv1.JobPhaseCompleted {
		errorf(t, "ImagePrePullJob: phase %s (%s), want Completed", st.Phase, st.Reason)
	}
	return out
}

// refOutcomes says how each reference node ended a job it hands to keadm,
// and checks that the job changed nothing on it: same binary and
// configuration, Ready on the version it ran.
func refOutcomes(t *testing.T, c *cluster, refs []*fleetNode, ss []opsv1.NodeUpgradeJobNodeTaskStatus, baseKE string) string {
	t.Helper()
	byName := map[string]opsv1.NodeUpgradeJobNodeTaskStatus{}
	for _, s := range ss {
		byName[s.NodeName] = s
	}
	kinds := map[string]int{}
	for _, n := range refs {
		s := byName[n.name]
		reason := s.Reason
		for _, a := range s.ActionFlow {
			if a.Status != metav1.ConditionTrue && a.Reason != "" {
				reason = a.Reason
			}
		}
		reason = strings.Join(strings.Fields(reason), " ")
		if len(reason) > 160 {
			reason = reason[:160] + "…"
		}
		kinds[fmt.Sprintf("%s [%s]: %s", s.Phase, flowOf(s.ActionFlow), reason)]++
		if s.Phase == opsv1.NodeTaskPhaseSuccessful {
			errorf(t, "reference node %s ended a job it hands to keadm Successful, with no keadm on the host: %s", n.name, jsonOf(s))
		}
		if !bytes.Equal(readOrFail(t, n.cfgFile()), n.config) || sha256File(t, n.binFile()) != n.binary {
			errorf(t, "reference node %s: its binary or configuration changed", n.name)
		}
		eventually(t, readyBound, "reference node "+n.name+" Ready on KubeEdge "+baseKE, func() (bool, error) {
			if ke := reportedKubeEdge(t, c, n.name); ke != baseKE {
				return false, fmt.Errorf("reports %s", ke)
			}
			return c.nodeReady(n.name, time.Time{})()
		})
	}
	var parts []string
	for k, v := range kinds {
		parts = append(parts, fmt.Sprintf("%d× %s", v, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// configFlows puts a ConfigUpdateJob's node statuses in the form of a
// NodeUpgradeJob's, whose helpers read them.
func configFlows(ss []opsv1.ConfigUpdateJobNodeTaskStatus) []opsv1.NodeUpgradeJobNodeTaskStatus {
	var out []opsv1.NodeUpgradeJobNodeTaskStatus
	for _, s := range ss {
		st := opsv1.NodeUpgradeJobNodeTaskStatus{NodeName: s.NodeName, Phase: s.Phase, Reason: s.Reason}
		for _, a := range s.ActionFlow {
			st.ActionFlow = append(st.ActionFlow, opsv1.NodeUpgradeJobActionStatus{Action: opsv1.NodeUpgradeJobAction(a.Action), Status: a.Status, Reason: a.Reason, Time: a.Time})
		}
		out = append(out, st)
	}
	return out
}

// tally counts the outcomes: "2 upgraded, 2 rolled back, 16 refused at Check".
func tally(res map[string]string) string {
	n := map[string]int{}
	for _, o := range res {
		n[o]++
	}
	var parts []string
	for o, k := range n {
		parts = append(parts, fmt.Sprintf("%d %s", k, o))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// maxInFlight is the most node tasks in flight at once, from their action
// times: a task is in flight from its first action to its last. Times are
// whole seconds, so a task that ended in the second another began is not
// counted with it.
func maxInFlight(ss []opsv1.NodeUpgradeJobNodeTaskStatus) int {
	type span struct{ from, to time.Time }
	var spans []span
	for _, s := range ss {
		if len(s.ActionFlow) == 0 {
			continue
		}
		from, err1 := time.Parse(time.RFC3339, s.ActionFlow[0].Time)
		to, err2 := time.Parse(time.RFC3339, s.ActionFlow[len(s.ActionFlow)-1].Time)
		if err1 != nil || err2 != nil {
			continue
		}
		spans = append(spans, span{from, to})
	}
	most := 0
	for _, a := range spans {
		n := 0
		for _, b := range spans {
			if !b.from.After(a.from) && b.to.After(a.from) {
				n++
			}
		}
		if n == 0 {
			n = 1
		}
		most = max(most, n)
	}
	return most
}

// fleetMemory sums the resident memory of the nodes' processes: each
// Linux node's edgecore, and the edgecore.exe of each Windows host (the
// Unix process that runs it).
func fleetMemory(nodes []*fleetNode) string {
	var linux, wine float64
	var nl, nw int
	for _, n := range nodes {
		if n.e != nil {
			_, rss, _ := memory(n.e.edgecore.cmd.Process.Pid)
			linux += rss
			nl++
		}
	}
	for _, n := range nodes {
		if n.j == nil {
			continue
		}
		if pid := winePID(n.j.h.prefix, "edgecore.exe"); pid > 0 {
			_, rss, _ := memory(pid)
			wine += rss
			nw++
		}
	}
	return fmt.Sprintf("%d Linux edgecore %.0f MiB (%.0f MiB each), %d edgecore.exe under Wine %.0f MiB (%.0f MiB each)",
		nl, linux, linux/float64(max(nl, 1)), nw, wine, wine/float64(max(nw, 1)))
}

// winePID finds the Unix process that runs program in the Wine prefix.
func winePID(prefix, program string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte("WINEPREFIX="+prefix+"\x00")) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if bytes.Contains(bytes.ToLower(cmdline), []byte(strings.ToLower(program))) {
			return pid
		}
	}
	return 0
}

func fleetInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		fatalf(t, "%s=%q: want a whole number, 0 or more", name, v)
	}
	return n
}

// messageCounts counts the messages cloudcore's hub took from nodes and
// sent to them, from its own log: with -vmodule message_handler=4 it logs
// "[messageHandler]get msg from node(<name>)" for each message a node sent
// (keepalives included), and with node_session=4 "send message to node
// <name>" for each one it sent.
type messageCounts struct {
	t   *testing.T
	log string
}

// countMessages restarts cloudcore with the log lines messageCounts reads.
func (c *cluster) countMessages(t *testing.T) *messageCounts {
	t.Helper()
	c.cloudcore.stop()
	c.cloudArgs = append(c.cloudArgs, "--vmodule=message_handler=4,node_session=4")
	c.restartCloudcore(t)
	return &messageCounts{t: t, log: c.cloudcore.log}
}

func (m *messageCounts) mark() int64 { return fileSize(m.log) }

// since counts the messages logged after offset.
func (m *messageCounts) since(offset int64) string {
	data, err := os.ReadFile(m.log)
	if err != nil || int64(len(data)) < offset {
		return "(cloudcore's log unreadable)"
	}
	var up, down, jobsUp, jobsDown int
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		job := strings.Contains(line, "nodeupgradejob") || strings.Contains(line, "configupdatejob") || strings.Contains(line, "imageprepulljob")
		switch {
		case strings.Contains(line, "[messageHandler]get msg from node("):
			up++
			if job {
				jobsUp++
			}
		case strings.Contains(line, "send message to node "):
			down++
			if job {
				jobsDown++
			}
		}
	}
	return fmt.Sprintf("%d messages from nodes, %d to nodes (of them the job's: %d from, %d to)", up, down, jobsUp, jobsDown)
}
