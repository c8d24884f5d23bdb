//go:build e2e

// The fault-injection harness: a node on the loopback cloud is killed
// (SIGKILL, as a power cut or a crash ends it) at seeded random moments,
// and the link between it and cloudcore is cut, black-holed, delayed and
// reset by a proxy (chaoslink_test.go), and cloudcore itself is killed and
// started again, while the cloud churns the node's pods, ConfigMaps and
// Secrets and while logs and exec streams into its pods are open. After
// each fault it checks what an operator relies on: the node's SQLite
// database passes integrity_check, the node's database, its runtime and the
// cloud agree (every pod bound to the node runs exactly once, no sandbox or
// container of a pod the cloud no longer has, none lost or duplicated, the
// statuses the cloud shows are the runtime's, the node holds the cloud's
// latest version of every object it was sent), and the node is Ready again
// with a heartbeat sent after the fault. `make chaos` (chaosrun_test.go)
// runs a long schedule for our node and the upstream reference side by
// side; TestLinuxChaosSmoke, a short one, is part of `make e2e`.

package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/test/fakecri"
)

// Fault kinds besides the link's modes (chaoslink_test.go).
const (
	faultKill      = "kill"      // SIGKILL of the node's process, started again at once
	faultCloudcore = "cloudcore" // SIGKILL of cloudcore amid the churn, started again at once
)

// chaosFault is one step of a schedule.
type chaosFault struct {
	kind string
	// wait is how long after the node's process started (a kill) or the
	// node settled (the others) the fault strikes, the churn going on.
	wait time.Duration
	// hold is how long a link fault lasts; latency is a delay's.
	hold, latency time.Duration
	// settle: after this fault the node is let to settle and the
	// invariants are checked; a kill without it is followed by the next
	// kill of its burst, a moment after the restart.
	settle bool
}

// chaosSchedule draws a schedule from seed: kills kills (in bursts of one
// to three) and rounds rounds of each link fault and of a cloudcore
// restart, shuffled; moments within slow's scale (the time a node takes
// to start: longer under Wine).
func chaosSchedule(seed int64, kills, rounds int, slow time.Duration) []chaosFault {
	rng := rand.New(rand.NewSource(seed))
	var kinds []string
	for i := 0; i < kills; i++ {
		kinds = append(kinds, faultKill)
	}
	for i := 0; i < rounds; i++ {
		kinds = append(kinds, linkCut, linkBlackhole, linkDelay, linkReset, faultCloudcore)
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int63n(int64(hi-lo))) }
	out := make([]chaosFault, len(kinds))
	for i, k := range kinds {
		f := chaosFault{kind: k, settle: true}
		switch k {
		case faultKill:
			// From the first moments of the start (the database
			// opening, the first sync) to well after Ready.
			f.wait = between(slow/20, slow)
			f.settle = i == len(kinds)-1 || kinds[i+1] != faultKill || rng.Intn(2) == 0
		case linkCut, linkReset:
			f.wait, f.hold = between(time.Second, slow/2), between(3*time.Second, 20*time.Second)
		case linkBlackhole:
			// Longer than edgeHub's heartbeat (15 s) at times, so that
			// the node must notice a dead connection on its own.
			f.wait, f.hold = between(time.Second, slow/2), between(5*time.Second, 45*time.Second)
		case linkDelay:
			f.wait, f.hold, f.latency = between(time.Second, slow/2), between(5*time.Second, 20*time.Second), between(200*time.Millisecond, 3*time.Second)
		case faultCloudcore:
			f.wait = between(time.Second, slow/2)
		}
		out[i] = f
	}
	return out
}

// chaosSeed is CHAOS_SEED, or a new seed from the clock.
func chaosSeed(t *testing.T) int64 {
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fatalf(t, "CHAOS_SEED=%q: want an integer (the seed a run printed)", s)
		}
		return n
	}
	return time.Now().UnixNano() % 1_000_000_007
}

// chaosResult is what one node went through and how it came out.
type chaosResult struct {
	variant, system string
	faults          map[string]int
	// integrity: kills after which the database was checked, and the
	// failures; converged: settles, and those that converged (converge
	// holds the times).
	checked, integrityFailed int
	settles, converged       int
	converge                 []time.Duration
	// Counts over all settles that did not converge, by invariant.
	lost, duplicated, orphans, statuses, messagesLost, notReady int
	ready                                                       map[string][]time.Duration
	// streamsOpened counts the kills struck with a logs -f and an exec
	// open; followEnded and execEnded, those of each that ended.
	streamsOpened, followEnded, execEnded int
	// violations, each with the fault it followed.
	violations []string
}

// chaosNode is one node under the harness.
type chaosNode struct {
	c       *cluster
	e       *edge
	link    *linkProxy
	ns      string
	state   string // the fake runtime's state file
	results *chaosResult
	streams *chaosStreams
	// beforeStop, when set, runs after the schedule's last fault, while
	// the node still runs (a check of the run's own).
	beforeStop func()
	// forwarders stand in for cloudcore's iptables rule, by address: the
	// node's IP and the kubelet port cloudcore gave it (another after
	// cloudcore restarted, at times).
	forwarders map[string]*forwarder
}

// startChaosNode prepares node name of goos to run bin, with the fake
// runtime keeping a state file and the hub and tunnel through a link
// proxy, and starts it and waits until it is Ready.
func startChaosNode(t *testing.T, c *cluster, goos, name, bin string, prepare func(*edge)) *chaosNode {
	t.Helper()
	e := newNamedEdge(t, c, goos, name)
	n := &chaosNode{c: c, e: e, ns: name, state: filepath.Join(e.dir, "cri-state.json")}
	// The runtime again, keeping its state where the harness reads it.
	e.fakecri.stop()
	fake := mustEnv(t, "FAKECRI_BIN")
	criEndpoint := "unix://" + filepath.Join(e.dir, "cri.sock")
	if goos == "windows" {
		fake, criEndpoint = mustEnv(t, "FAKECRI_EXE"), fakecri.DefaultEndpoint
	}
	fbin, args := e.command(fake, "--endpoint", criEndpoint, "-v", "--image-fs-dir", e.path(filepath.Join(e.dir, "images")),
		"--state-file", e.path(n.state))
	e.fakecri = start(t, e.dir, "fakecri-chaos", e.env, fbin, args...)
	eventually(t, time.Minute, "fake CRI serving", func() (bool, error) { return e.fakecri.logContains("serving"), nil })

	n.link, _ = startLinkProxy(t, "127.0.0.1:"+strconv.Itoa(hubPort), "127.0.0.1:"+strconv.Itoa(tunnelPort))
	addrs := []string{n.link.ls[0].Addr().String(), n.link.ls[1].Addr().String()}
	setYAML(t, e.cfgPath, []string{"modules", "edgeHub", "websocket", "server"}, addrs[0])
	setYAML(t, e.cfgPath, []string{"modules", "edgeStream", "server"}, addrs[1])
	e.bin = bin
	if prepare != nil {
		prepare(e)
	}
	ctx := context.Background()
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fatal(t, err)
	}
	e.startEdgecore(t)
	eventually(t, readyBound, "node "+name+" Ready", c.nodeReady(name, time.Time{}))
	return n
}

// setYAML sets the field at path of the YAML file to value, leaving the
// rest as it is: both our edgecore and the reference read the file.
func setYAML(t *testing.T, file string, path []string, value any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		fatal(t, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		fatal(t, err)
	}
	m := doc
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			fatalf(t, "%s has no %s", file, strings.Join(path, "."))
		}
		m = next
	}
	m[path[len(path)-1]] = value
	if data, err = yaml.Marshal(doc); err == nil {
		err = os.WriteFile(file, data, 0o600)
	}
	if err != nil {
		fatal(t, err)
	}
}

// chaosChurn is the cloud's side of the run: it creates, updates and
// deletes the node's pods, each with a ConfigMap and a Secret mounted,
// and updates those, one operation every few hundred milliseconds, drawn
// from its own generator so that every node of a run sees the same
// sequence.
type chaosChurn struct {
	n       *chaosNode
	rng     *rand.Rand
	maxPods int
	// volumes: the churned pods mount a ConfigMap and a Secret. Not under
	// Wine: there the kubelet cannot tear such a volume down (Go's
	// os.RemoveAll asks NtSetInformationFile for
	// FileDispositionInformationEx, which Wine 8 answers "Invalid
	// function", not a status Go falls back on), so no deleted pod with
	// one is ever confirmed, by our node or the reference. The Linux run
	// mounts them.
	volumes bool
	mu      sync.Mutex
	alive   []string
	next    int
	ops     map[string]int
	errs    int
	stop    chan struct{}
	done    chan struct{}
}

const (
	chaosConfigMaps = 2
	chaosSecrets    = 2
	// chaosStreamPod is the pod the logs and exec streams are open to; the
	// churn leaves it alone.
	chaosStreamPod = "stream"
)

func newChaosChurn(t *testing.T, n *chaosNode, seed int64, maxPods int) *chaosChurn {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < chaosConfigMaps; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: n.ns}, Data: map[string]string{"v": "0"}}
		if _, err := n.c.client.CoreV1().ConfigMaps(n.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			fatal(t, err)
		}
	}
	for i := 0; i < chaosSecrets; i++ {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sec-%d", i), Namespace: n.ns}, StringData: map[string]string{"v": "0"}}
		if _, err := n.c.client.CoreV1().Secrets(n.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			fatal(t, err)
		}
	}
	ch := &chaosChurn{n: n, rng: rand.New(rand.NewSource(seed + 1)), maxPods: maxPods, ops: map[string]int{}, volumes: n.e.os != "windows"}
	// The stream pod: the fake's echo prints a line, then it keeps running.
	pod := ch.pod(chaosStreamPod, 0, 0)
	pod.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10.2"
	pod.Spec.Containers[0].Command = []string{fakecri.CmdEcho, "first", "line"}
	if _, err := n.c.client.CoreV1().Pods(n.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	return ch
}

// pod is the spec of churned pod name, with ConfigMap cm-<cm> and Secret
// sec-<sec> mounted where the churn has volumes.
func (ch *chaosChurn) pod(name string, cm, sec int) *corev1.Pod {
	e := ch.n.e
	image, command, cmPath, secPath := "registry.k8s.io/e2e-test-images/busybox:1.36.1-1", []string{"sh", "-c", "sleep 3600"}, "/etc/cm", "/etc/sec"
	if e.os == "windows" {
		image, command, cmPath, secPath = "mcr.microsoft.com/windows/servercore:ltsc2022", []string{"cmd", "/c", "ping -t localhost"}, `C:\cm`, `C:\sec`
	}
	grace := int64(1)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ch.n.ns, Labels: map[string]string{"gen": "0"}},
		Spec: corev1.PodSpec{
			NodeName:                      e.name,
			NodeSelector:                  map[string]string{"kubernetes.io/os": e.os},
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "app", Image: image, Command: command, ImagePullPolicy: corev1.PullIfNotPresent,
				VolumeMounts: []corev1.VolumeMount{{Name: "cm", MountPath: cmPath}, {Name: "sec", MountPath: secPath}}}},
			Volumes: []corev1.Volume{
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("cm-%d", cm)}}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: fmt.Sprintf("sec-%d", sec)}}},
			},
		},
	}
	if !ch.volumes {
		pod.Spec.Volumes, pod.Spec.Containers[0].VolumeMounts = nil, nil
	}
	return pod
}

// run churns until pause.
func (ch *chaosChurn) run() {
	ch.stop, ch.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ch.done)
		for {
			ch.mu.Lock()
			wait := time.Duration(300+ch.rng.Intn(700)) * time.Millisecond
			ch.mu.Unlock()
			select {
			case <-ch.stop:
				return
			case <-time.After(wait):
			}
			ch.op()
		}
	}()
}

// pause stops the churn and waits for its operation in flight.
func (ch *chaosChurn) pause() {
	if ch.stop == nil {
		return
	}
	close(ch.stop)
	<-ch.done
	ch.stop = nil
}

// op does one operation drawn from the generator.
func (ch *chaosChurn) op() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	core := ch.n.c.client.CoreV1()
	r := ch.rng.Intn(100)
	var kind string
	var err error
	switch {
	case len(ch.alive) < 2 || r < 30 && len(ch.alive) < ch.maxPods:
		kind = "create pod"
		name := fmt.Sprintf("p-%d", ch.next)
		ch.next++
		_, err = core.Pods(ch.n.ns).Create(ctx, ch.pod(name, ch.rng.Intn(chaosConfigMaps), ch.rng.Intn(chaosSecrets)), metav1.CreateOptions{})
		if err == nil {
			ch.alive = append(ch.alive, name)
		}
	case r < 55:
		kind = "delete pod"
		i := ch.rng.Intn(len(ch.alive))
		err = core.Pods(ch.n.ns).Delete(ctx, ch.alive[i], metav1.DeleteOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			ch.alive = slices.Delete(ch.alive, i, i+1)
		}
	case r < 70:
		kind = "update pod"
		name := ch.alive[ch.rng.Intn(len(ch.alive))]
		patch := fmt.Sprintf(`{"metadata":{"labels":{"gen":"%d"}}}`, ch.rng.Intn(1_000_000))
		_, err = core.Pods(ch.n.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	case r < 85:
		kind = "update configmap"
		patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, ch.rng.Intn(1_000_000))
		_, err = core.ConfigMaps(ch.n.ns).Patch(ctx, fmt.Sprintf("cm-%d", ch.rng.Intn(chaosConfigMaps)), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	default:
		kind = "update secret"
		patch := fmt.Sprintf(`{"stringData":{"v":"%d"}}`, ch.rng.Intn(1_000_000))
		_, err = core.Secrets(ch.n.ns).Patch(ctx, fmt.Sprintf("sec-%d", ch.rng.Intn(chaosSecrets)), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	ch.ops[kind]++
	if err != nil {
		ch.errs++
	}
}

// integrity runs SQLite's integrity_check on a copy of the node's
// database (its file and its journal, as the process left them).
func (n *chaosNode) integrity() error {
	dir, err := os.MkdirTemp("", "chaos-db-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(n.e.dir, "edgecore.db")
	for _, suffix := range []string{"", "-wal", "-journal"} {
		data, err := os.ReadFile(src + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "edgecore.db"+suffix), data, 0o600); err != nil {
			return err
		}
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "edgecore.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity_check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		lines = append(lines, s)
	}
	if len(lines) != 1 || lines[0] != "ok" {
		return fmt.Errorf("integrity_check: %s", strings.Join(lines, "; "))
	}
	return rows.Err()
}

// nodeRecord is what the node's database holds of one object: its
// resource version and labels.
type nodeRecord struct {
	Metadata struct {
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
}

// dbRecords reads the node's database: the objects of the node's namespace
// of type kind (pod, configmap, secret) by name.
func (n *chaosNode) dbRecords(kind string) (map[string]nodeRecord, error) {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(n.e.dir, "edgecore.db")+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	prefix := n.ns + "/" + kind + "/"
	rows, err := db.Query("SELECT key, value FROM meta WHERE key LIKE ?", prefix+"%")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]nodeRecord{}
	for rows.Next() {
		var key, value string
		if err := rows.Scan(&key, &value); err != nil {
			return nil, err
		}
		var r nodeRecord
		if err := json.Unmarshal([]byte(value), &r); err != nil {
			return nil, fmt.Errorf("%s in the node's database: %w", key, err)
		}
		out[strings.TrimPrefix(key, prefix)] = r
	}
	return out, rows.Err()
}

// verdict is what one look at the cloud, the runtime and the node's
// database found wrong, by invariant.
type verdict struct {
	lost, duplicated, orphans, statuses, messagesLost []string
}

func (v verdict) all() []string {
	return slices.Concat(v.lost, v.duplicated, v.orphans, v.statuses, v.messagesLost)
}

// look compares the cloud, the runtime and the node's database once.
func (n *chaosNode) look() (verdict, error) {
	var v verdict
	ctx := context.Background()
	core := n.c.client.CoreV1()
	pods, err := core.Pods(n.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return v, err
	}
	st, err := fakecri.ReadState(n.state)
	if err != nil {
		return v, fmt.Errorf("the runtime's state: %w", err)
	}
	dbPods, err := n.dbRecords("pod")
	if err != nil {
		return v, fmt.Errorf("the node's database: %w", err)
	}
	sandboxUID := map[string]string{}
	readyByUID := map[string][]fakecri.SandboxState{}
	for _, sb := range st.Sandboxes {
		sandboxUID[sb.ID] = sb.UID
		if sb.State == "SANDBOX_READY" {
			readyByUID[sb.UID] = append(readyByUID[sb.UID], sb)
		}
	}
	running := map[string][]fakecri.ContainerState{} // by sandbox
	for _, c := range st.Containers {
		if c.State == "CONTAINER_RUNNING" {
			running[c.SandboxID] = append(running[c.SandboxID], c)
		}
	}
	cloudUIDs := map[string]bool{}
	mounted := map[string]bool{} // configmap/NAME, secret/NAME of live pods
	for _, p := range pods.Items {
		cloudUIDs[string(p.UID)] = true
		if p.DeletionTimestamp != nil {
			v.lost = append(v.lost, fmt.Sprintf("pod %s deleted in the cloud %s ago and not confirmed by the node", p.Name, time.Since(p.DeletionTimestamp.Time).Round(time.Second)))
			continue
		}
		for _, vol := range p.Spec.Volumes {
			if vol.ConfigMap != nil {
				mounted["configmap/"+vol.ConfigMap.Name] = true
			}
			if vol.Secret != nil {
				mounted["secret/"+vol.Secret.SecretName] = true
			}
		}
		sbs := readyByUID[string(p.UID)]
		var ctrs []fakecri.ContainerState
		for _, sb := range sbs {
			ctrs = append(ctrs, running[sb.ID]...)
		}
		switch {
		case len(sbs) == 0 || len(ctrs) == 0:
			v.lost = append(v.lost, fmt.Sprintf("pod %s: %d ready sandboxes and %d running containers at the node, want one of each", p.Name, len(sbs), len(ctrs)))
			continue
		case len(sbs) > 1 || len(ctrs) > 1:
			v.duplicated = append(v.duplicated, fmt.Sprintf("pod %s runs %d times at the node (%d ready sandboxes, %d running containers)", p.Name, max(len(sbs), len(ctrs)), len(sbs), len(ctrs)))
			continue
		}
		cs := p.Status.ContainerStatuses
		ready := false
		for _, cond := range p.Status.Conditions {
			ready = ready || cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue
		}
		if p.Status.Phase != corev1.PodRunning || !ready || len(cs) != 1 || cs[0].State.Running == nil ||
			runtimeID(cs[0].ContainerID) != ctrs[0].ID || p.Status.PodIP != sbs[0].IP {
			reported := "no container"
			if len(cs) == 1 {
				reported = fmt.Sprintf("container %.12s running %v", runtimeID(cs[0].ContainerID), cs[0].State.Running != nil)
			}
			v.statuses = append(v.statuses, fmt.Sprintf("pod %s: the cloud shows %s, Ready %v, %s, IP %q; the runtime runs container %.12s, IP %q",
				p.Name, p.Status.Phase, ready, reported, p.Status.PodIP, ctrs[0].ID, sbs[0].IP))
		}
		if r, ok := dbPods[p.Name]; !ok {
			v.messagesLost = append(v.messagesLost, fmt.Sprintf("pod %s is not in the node's database", p.Name))
		} else if r.Metadata.Labels["gen"] != p.Labels["gen"] {
			v.messagesLost = append(v.messagesLost, fmt.Sprintf("pod %s: the node's database has label gen=%s, the cloud %s", p.Name, r.Metadata.Labels["gen"], p.Labels["gen"]))
		}
	}
	for uid, sbs := range readyByUID {
		if !cloudUIDs[uid] {
			v.orphans = append(v.orphans, fmt.Sprintf("sandbox %.12s of pod %s (%s) ready, the cloud has no such pod", sbs[0].ID, sbs[0].Pod, uid))
		}
	}
	for _, ctrs := range running {
		for _, c := range ctrs {
			if !cloudUIDs[sandboxUID[c.SandboxID]] {
				v.orphans = append(v.orphans, fmt.Sprintf("container %.12s of pod %s running, the cloud has no such pod", c.ID, c.Pod))
			}
		}
	}
	for name := range dbPods {
		if !slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool { return p.Name == name }) {
			v.messagesLost = append(v.messagesLost, fmt.Sprintf("pod %s is in the node's database, the cloud deleted it", name))
		}
	}
	for _, kind := range []string{"configmap", "secret"} {
		recs, err := n.dbRecords(kind)
		if err != nil {
			return v, fmt.Errorf("the node's database: %w", err)
		}
		for key := range mounted {
			k, name, _ := strings.Cut(key, "/")
			if k != kind {
				continue
			}
			var version string
			if kind == "configmap" {
				cm, err := core.ConfigMaps(n.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return v, err
				}
				version = cm.ResourceVersion
			} else {
				s, err := core.Secrets(n.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return v, err
				}
				version = s.ResourceVersion
			}
			if r, ok := recs[name]; !ok {
				v.messagesLost = append(v.messagesLost, fmt.Sprintf("%s %s, mounted by a pod, is not in the node's database", kind, name))
			} else if r.Metadata.ResourceVersion != version {
				v.messagesLost = append(v.messagesLost, fmt.Sprintf("%s %s: the node's database has version %s, the cloud %s", kind, name, r.Metadata.ResourceVersion, version))
			}
		}
	}
	for _, l := range [][]string{v.lost, v.duplicated, v.orphans, v.statuses, v.messagesLost} {
		sort.Strings(l)
	}
	return v, nil
}

// converge looks until the cloud, the runtime and the node's database
// agree, up to bound, and returns how long that took and, if they never
// did, the last verdict.
func (n *chaosNode) converge(bound time.Duration) (time.Duration, verdict, bool) {
	begin := time.Now()
	var v verdict
	for {
		got, err := n.look()
		if err == nil {
			v = got
			if len(v.all()) == 0 {
				return time.Since(begin), v, true
			}
		} else {
			v = verdict{lost: []string{err.Error()}}
		}
		// A node whose process ended will not get there.
		if time.Since(begin) > bound || n.e.edgecore.exited() {
			return time.Since(begin), v, false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// readyAgain waits, up to bound after from, until the node is Ready with a
// heartbeat sent since from, the end of the fault that struck at struck
// (untilReady: a node whose condition stayed True through a short fault
// is back once its Lease is renewed since from), and returns how long
// after from that was.
func (n *chaosNode) readyAgain(struck, from time.Time, bound time.Duration) (time.Duration, error) {
	ready, _, _, err := n.c.untilReady(n.e.name, readyWait{from: from, until: from.Add(bound), struck: struck, ended: n.e.edgecore.exited})
	switch {
	case err == nil:
		return ready, nil
	case n.e.edgecore.exited():
		return 0, fmt.Errorf("not Ready: the node's process ended by itself (its log: %s)", n.e.edgecore.log)
	}
	return 0, fmt.Errorf("not Ready with a heartbeat since %s within %v: %v", from.Format("15:04:05.000"), bound, err)
}

// chaosStreams are a `kubectl logs --follow` and a `kubectl exec` (the
// fake's cat, its stdin held open) into the stream pod, through cloudcore's
// tunnel, open when a fault strikes: each must end with the node's
// connection rather than hang.
type chaosStreams struct {
	cancel context.CancelFunc
	follow chan error
	exec   chan error
	stdin  *io.PipeWriter
}

// openStreams opens both streams, if the node's tunnel is up.
func (n *chaosNode) openStreams(t *testing.T) bool {
	t.Helper()
	n.closeStreams()
	node, err := n.c.client.CoreV1().Nodes().Get(context.Background(), n.e.name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 || port == kubeletPort {
		return false
	}
	addr := net.JoinHostPort(n.e.nodeIP, strconv.Itoa(int(port)))
	if n.forwarders == nil {
		n.forwarders = map[string]*forwarder{}
	}
	if n.forwarders[addr] == nil {
		n.forwarders[addr] = startForwarder(t, addr, "127.0.0.1:"+strconv.Itoa(streamPort))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &chaosStreams{cancel: cancel, follow: make(chan error, 1), exec: make(chan error, 1)}
	// A tunnel that is open at neither end answers nothing: the request
	// is given up after a while rather than waited for.
	giveUp := time.AfterFunc(15*time.Second, cancel)
	r, err := n.c.client.CoreV1().Pods(n.ns).GetLogs(chaosStreamPod, &corev1.PodLogOptions{Container: "app", Follow: true}).Stream(ctx)
	if err != nil || !giveUp.Stop() {
		if r != nil {
			r.Close()
		}
		cancel()
		return false
	}
	firstLine := make(chan struct{})
	go func() {
		br := bufio.NewReader(r)
		_, err := br.ReadString('\n')
		if err == nil {
			close(firstLine)
			_, err = io.Copy(io.Discard, br)
		}
		r.Close()
		s.follow <- err
	}()
	in, w := io.Pipe()
	s.stdin = w
	go func() {
		_, _, err := n.c.execIn(ctx, n.ns, chaosStreamPod, []string{fakecri.CmdCat}, in, false)
		s.exec <- err
	}()
	// The fake's cat reads its stdin until it ends: the exec stays open
	// once its first line went in.
	wrote := make(chan error, 1)
	go func() { _, err := w.Write([]byte("open\n")); wrote <- err }()
	n.streams = s
	opened := func() bool {
		select {
		case <-firstLine:
		case <-time.After(10 * time.Second):
			return false
		}
		select {
		case err := <-wrote:
			return err == nil
		case <-time.After(10 * time.Second):
			return false
		}
	}()
	if !opened {
		n.closeStreams()
	}
	return opened
}

// streamsEnded waits up to bound for both streams to end and tells which
// did.
func (n *chaosNode) streamsEnded(bound time.Duration) (follow, exec bool) {
	s := n.streams
	if s == nil {
		return false, false
	}
	deadline := time.After(bound)
	ended := [2]bool{}
	for i, ch := range []chan error{s.follow, s.exec} {
		select {
		case <-ch:
			ended[i] = true
		case <-deadline:
		}
	}
	n.closeStreams()
	return ended[0], ended[1]
}

func (n *chaosNode) closeStreams() {
	if n.streams != nil {
		n.streams.cancel()
		n.streams.stdin.Close()
		n.streams = nil
	}
}

// chaosBounds are how long a node may take, after a fault, to be Ready
// again and to converge: correctness bounds, not speed targets.
type chaosBounds struct{ ready, converge time.Duration }

// runSchedule takes node n through the schedule with the churn, checking
// the invariants after each fault; violations go into the result (the
// caller decides whether they fail the run).
func (n *chaosNode) runSchedule(t *testing.T, seed int64, sched []chaosFault, churn *chaosChurn, b chaosBounds, res *chaosResult) {
	t.Helper()
	n.results = res
	res.faults = map[string]int{}
	res.ready = map[string][]time.Duration{}
	e, c := n.e, n.c
	settled := true
	var burst time.Time
	// The first settle: every object there, the stream pod running.
	if _, v, ok := n.converge(b.converge + podBound); !ok {
		fatalf(t, "seed %d: node %s never converged before the first fault: %s", seed, e.name, strings.Join(v.all(), "; "))
	}
	for i, f := range sched {
		what := fmt.Sprintf("fault %d/%d (%s)", i+1, len(sched), f.kind)
		streams := false
		if settled && f.kind == faultKill {
			streams = n.openStreams(t)
			if streams {
				res.streamsOpened++
			}
		}
		churn.run()
		res.faults[f.kind]++
		var struck, from time.Time
		switch f.kind {
		case faultKill:
			// A kill after the node settled strikes wait later; one of a
			// burst, wait after its process started.
			if settled {
				time.Sleep(f.wait)
			} else {
				time.Sleep(time.Until(e.edgecore.started.Add(f.wait)))
			}
			// A burst struck with its first kill.
			if settled {
				burst = time.Now()
			}
			struck = burst
			e.edgecore.kill()
			res.checked++
			if err := n.integrity(); err != nil {
				res.integrityFailed++
				res.violations = append(res.violations, fmt.Sprintf("%s: the database after the kill: %v", what, err))
			}
			// As a service manager restarts it, in a later second than
			// the killed process's last report.
			nextSecond()
			e.startEdgecore(t)
			from = e.edgecore.started
		case faultCloudcore:
			time.Sleep(f.wait)
			struck = time.Now()
			c.cloudcore.kill()
			from = c.restartCloudcore(t)
		default:
			time.Sleep(f.wait)
			struck = time.Now()
			n.link.set(f.kind, f.latency)
			time.Sleep(f.hold)
			n.link.set(linkUp, 0)
			from = time.Now()
		}
		if !f.settle {
			settled = false
			churn.pause()
			continue
		}
		// The churn goes on a while after the fault, then stops so that
		// the node can catch up with a cloud that stands still.
		time.Sleep(2 * time.Second)
		churn.pause()
		ready, err := n.readyAgain(struck, from, b.ready)
		if err != nil {
			res.notReady++
			res.violations = append(res.violations, fmt.Sprintf("%s: %v", what, err))
		} else {
			res.ready[f.kind] = append(res.ready[f.kind], ready)
		}
		if streams {
			follow, exec := n.streamsEnded(15 * time.Second)
			if follow {
				res.followEnded++
			}
			if exec {
				res.execEnded++
			}
		}
		res.settles++
		// A node that is not back gets one look, not the wait.
		bound := b.converge
		if err != nil {
			bound = 0
		}
		took, v, ok := n.converge(bound)
		if ok {
			res.converged++
			res.converge = append(res.converge, took)
		} else {
			res.lost += len(v.lost)
			res.duplicated += len(v.duplicated)
			res.orphans += len(v.orphans)
			res.statuses += len(v.statuses)
			res.messagesLost += len(v.messagesLost)
			res.violations = append(res.violations, fmt.Sprintf("%s: not converged within %v: %s", what, bound, strings.Join(v.all(), "; ")))
			// Said at once too: a long run's summary comes hours later.
			t.Logf("seed %d, node %s, %s: not converged: %s", seed, e.name, what, strings.Join(v.all(), "; "))
		}
		if e.edgecore.exited() {
			res.violations = append(res.violations, fmt.Sprintf("%s: the node's process ended by itself (see %s)", what, e.edgecore.log))
			e.startEdgecore(t)
		}
		settled = true
		t.Logf("seed %d, node %s, %s: Ready again %s after it, converged %v in %s", seed, e.name, what, fmtDur(ready), ok, fmtDur(took))
	}
	if n.beforeStop != nil {
		n.beforeStop()
	}
	// The database once more after a clean stop.
	e.edgecore.stop()
	res.checked++
	if err := n.integrity(); err != nil {
		res.integrityFailed++
		res.violations = append(res.violations, fmt.Sprintf("after the last fault and a clean stop: %v", err))
	}
	n.closeStreams()
	t.Logf("seed %d, node %s: churn %v (%d failed calls)", seed, e.name, churn.ops, churn.errs)
}

// TestLinuxChaosSmoke is the short run of the harness in `make e2e`: four
// kills and a black hole (the fault whose end the node must notice on its
// own), on our Linux build.
func TestLinuxChaosSmoke(t *testing.T) {
	seed := chaosSeed(t)
	t.Logf("chaos seed %d (CHAOS_SEED=%d replays it)", seed, seed)
	c := startClusterWith(t, cluster{dynamicController: true})
	n := startChaosNode(t, c, "linux", "chaos-smoke", mustEnv(t, "EDGECORE_BIN"), nil)
	churn := newChaosChurn(t, n, seed, 4)
	sched := chaosSchedule(seed, 4, 0, 6*time.Second)
	sched = append(sched, chaosFault{kind: linkBlackhole, wait: time.Second, hold: 20 * time.Second, settle: true})
	res := &chaosResult{variant: "ours", system: "Linux"}
	// The black hole swallowed the stream tunnel too, which no read or
	// write of its own notices: a logs -f and an exec opened after it
	// answer once the node closed the silent tunnel and connected again
	// (patches/0019), not when TCP gives up a quarter of an hour later.
	n.beforeStop = func() {
		tunnel := eventually(t, 2*time.Minute, "logs -f and exec through the node's stream tunnel after the black hole", func() (bool, error) {
			return n.openStreams(t), nil
		})
		n.closeStreams()
		t.Logf("after the black hole, logs -f and exec through the stream tunnel answered within %s", fmtDur(tunnel))
	}
	n.runSchedule(t, seed, sched, churn, chaosBounds{ready: readyBound, converge: 90 * time.Second}, res)
	for _, v := range res.violations {
		errorf(t, "seed %d (CHAOS_SEED=%d replays it): %s", seed, seed, v)
	}
	t.Logf("chaos smoke, seed %d: %d faults, Ready again after them %v; logs -f and exec streams ended with the killed node: %d of %d",
		seed, len(sched), res.ready, res.followEnded+res.execEnded, 2*res.streamsOpened)
	t.Logf("of them logs -f: %d of %d, exec: %d of %d", res.followEnded, res.streamsOpened, res.execEnded, res.streamsOpened)
}
