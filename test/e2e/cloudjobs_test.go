//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	opsv1 "github.com/kubeedge/api/apis/operations/v1alpha2"
	kubeedgeclient "github.com/kubeedge/api/client/clientset/versioned"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

const cloudJobBound = 6 * time.Minute

// The images of the pre-pull: the fake runtime has neither; the second is
// one its registry lacks (fakecri --fail-pull). The registry pulls only
// with the pull secret's credentials (fakecri --registry-auth).
const (
	prePullGood     = "registry.example.com/cloudjobs/app:1"
	prePullMissing  = "registry.example.com/cloudjobs/missing:1"
	prePullRegistry = "registry.example.com"
	prePullUser     = "robot"
	prePullPassword = "pw"
)

// TestWindowsCloudJobs sends a joined Windows node, which runs as the
// service, the cloud's other v1alpha2 jobs, through cloudcore and
// controller-manager v1.23.1: ConfigUpdateJobs that apply (the node comes
// back with the new maxPods, and the operator's comment stays in the
// file), that are refused before anything changes (a field no job may
// change, named in the job's status, and a value the Windows kubelet
// cannot take), and whose configuration does not start (it is rolled back
// and the node is Ready again on the file it had); then an
// ImagePrePullJob of two images, one of which the registry lacks; then a
// pod the node holds (edge.kubeedge.io/hold-upgrade) until an
// administrator releases it with `edgecore.exe upgrade unhold`.
func TestWindowsCloudJobs(t *testing.T) {
	c := startCluster(t)
	h := newWinHost(t)
	h.install(t, `C:\Program Files\edgecore`)
	j := &journey{t: t, c: c, h: h, token: c.token(t), layout: config.NewLayout(config.Host{GOOS: "windows"})}
	p := start(t, h.logDir, "fakecri", h.env, h.wine, mustEnv(t, "FAKECRI_EXE"),
		"--endpoint", "npipe://./pipe/containerd-containerd", "-v", "--image-fs-dir", containerdRoot, "--fail-pull", prePullMissing,
		"--registry-auth", prePullRegistry+"="+prePullUser+":"+prePullPassword)
	eventually(t, time.Minute, "fakecri serving", func() (bool, error) { return p.logContains("serving"), nil })
	j.fakecri = p
	j.node = j.joinedNode(j.run(j.args(joinCommand), 0).out)
	eventually(t, readyBound, "node "+j.node+" Ready", c.nodeReady(j.node, time.Time{}))
	// A pod runs through every configuration the jobs apply or roll back,
	// in its container.
	j.carried = j.runPod("steady")
	logFile := h.drive(j.layout.LogFile)
	// A bound for the health gate of a configuration that does not
	// start, beside the configuration as for upgrades.
	if err := os.WriteFile(h.drive(upgrade.SettingsPath(j.layout.GOOS, j.layout.ConfigFile)), []byte("repository: 'C:\\releases\\edgecore-{version}-windows-amd64.zip'\nhealthTimeout: 2m\n"), 0o644); err != nil {
		fatal(t, err)
	}
	c.startControllerManager(t)
	client, err := kubeedgeclient.NewForConfig(c.rest)
	if err != nil {
		fatal(t, err)
	}
	cfgPath := h.drive(j.layout.ConfigFile)
	// The operator's note on the file, which an update must keep.
	const note = "# line 3 PC: ask the plant team before changing maxPods"
	orig := j.readFile(cfgPath)
	if err := os.WriteFile(cfgPath, append([]byte(note+"\n"), orig...), 0o600); err != nil {
		fatal(t, err)
	}
	var figures []string

	// 1. An update that applies: the kubelet comes back with 42 pods.
	begin := time.Now()
	offset := fileSize(logFile)
	ns := j.configJob(client, "windows-maxpods", map[string]string{"modules.edged.tailoredKubeletConfig.maxPods": "42"})
	j.wantConfigFlow(ns, "Check=True BackUp=True Update=True", opsv1.NodeTaskPhaseSuccessful)
	text := string(j.readFile(cfgPath))
	if !strings.Contains(text, "maxPods: 42") || !strings.Contains(text, note) {
		fatalf(t, "after the update the file lacks maxPods: 42 or the operator's note:\n%s", text)
	}
	eventually(t, readyBound, "node Ready with 42 pods", func() (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(context.Background(), j.node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods := n.Status.Capacity[corev1.ResourcePods]
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		return ready && pods.Cmp(resource.MustParse("42")) == 0, fmt.Errorf("capacity pods %s, ready %v", pods.String(), ready)
	})
	applied := time.Since(begin)
	j.backAfter(offset, "ConfigUpdateJob windows-maxpods")
	t.Logf("ConfigUpdateJob windows-maxpods: applied in %s; the node is Ready with capacity 42 pods and the file keeps the operator's note", fmtDur(applied))
	figures = append(figures, "ConfigUpdateJob applied "+fmtDur(applied))

	// 2. Updates refused at Check, the file as it was: a field no job may
	// change (the CRI endpoint, pointed at another host), and a tunable
	// whose value the Windows kubelet cannot run with.
	before := j.readFile(cfgPath)
	for _, r := range []struct {
		name   string
		fields map[string]string
		want   []string
	}{
		{"windows-forbidden-endpoint", map[string]string{"modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint": "tcp://203.0.113.5:10010"},
			[]string{"modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint", "tcp://203.0.113.5:10010", "refused: an endpoint", `C:\etc\kubeedge\config\cloud-jobs.yaml`, "nothing on the node changed"}},
		{"windows-cgroups-per-qos", map[string]string{"modules.edged.tailoredKubeletConfig.cgroupsPerQOS": "true"},
			[]string{"cgroupsPerQOS", "true", "set cgroupsPerQOS: false", "nothing on the node changed"}},
	} {
		begin = time.Now()
		offset = fileSize(logFile)
		ns = j.configJob(client, r.name, r.fields)
		j.wantConfigFlow(ns, "Check=False", opsv1.NodeTaskPhaseFailure)
		for _, w := range r.want {
			if !strings.Contains(ns.ActionFlow[0].Reason, w) {
				errorf(t, "ConfigUpdateJob %s: the Check's reason %q lacks %q", r.name, ns.ActionFlow[0].Reason, w)
			}
		}
		if !bytes.Equal(before, j.readFile(cfgPath)) {
			fatalf(t, "ConfigUpdateJob %s was refused, yet the file changed", r.name)
		}
		refused := time.Since(begin)
		if data := j.readFile(logFile); int64(len(data)) >= offset && klogStart.Match(data[offset:]) {
			errorf(t, "ConfigUpdateJob %s was refused, yet edgecore started again", r.name)
		}
		t.Logf("ConfigUpdateJob %s: refused in %s: %s", r.name, fmtDur(refused), ns.ActionFlow[0].Reason)
		figures = append(figures, "ConfigUpdateJob "+r.name+" refused "+fmtDur(refused))
	}

	// 3. An update the node's rules accept but edgecore cannot start
	// with (an interface the host does not have): rolled back. The
	// field picks the address the node announces, which a job may
	// change only once the node's administrators name it in the node's
	// policy, as they do here.
	if err := os.WriteFile(h.drive(jobpolicy.PathOf(j.layout)), []byte("configUpdateJob:\n  fields: [modules.edged.customInterfaceName]\n"), 0o644); err != nil {
		fatal(t, err)
	}
	begin = time.Now()
	offset = fileSize(logFile)
	ns = j.configJob(client, "windows-no-such-nic", map[string]string{"modules.edged.customInterfaceName": "no-such-nic"})
	j.wantConfigFlow(ns, "Check=True BackUp=True Update=False RollBack=True", opsv1.NodeTaskPhaseSuccessful)
	// The cloud keeps the reason of failed actions only: the Update's
	// says what happened.
	if r := ns.ActionFlow[2].Reason; !strings.Contains(r, "rolled back") || !strings.Contains(r, "did not come back") {
		errorf(t, "ConfigUpdateJob windows-no-such-nic: the Update's reason %q does not say the node did not come back and was rolled back", r)
	}
	if !bytes.Equal(before, j.readFile(cfgPath)) {
		fatalf(t, "ConfigUpdateJob windows-no-such-nic was rolled back, yet the file is not the one before:\n%s", j.readFile(cfgPath))
	}
	j.backAfter(offset, "ConfigUpdateJob windows-no-such-nic")
	rolled := time.Since(begin)
	t.Logf("ConfigUpdateJob windows-no-such-nic: rolled back in %s, node Ready on the former file: %s", fmtDur(rolled), ns.ActionFlow[2].Reason)
	figures = append(figures, "ConfigUpdateJob rolled back "+fmtDur(rolled))
	if data := j.readFile(h.drive(j.layout.LogFile)); bytes.Contains(data, []byte(j.token)) {
		errorl(t, "the node's log holds the join token")
	}

	// 4. A pre-pull of two images, one missing from the registry, with
	// a pull secret.
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "line-registry", Namespace: "default"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(fmt.Sprintf(`{"auths":{%q:{"username":%q,"password":%q}}}`,
			prePullRegistry, prePullUser, prePullPassword))},
	}
	if _, err := c.client.CoreV1().Secrets("default").Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	begin = time.Now()
	pj := &opsv1.ImagePrePullJob{
		ObjectMeta: metav1.ObjectMeta{Name: "windows-prepull"},
		Spec: opsv1.ImagePrePullJobSpec{ImagePrePullTemplate: opsv1.ImagePrePullTemplate{
			Images: []string{prePullGood, prePullMissing}, NodeNames: []string{j.node}, RetryTimes: 1, ImageSecret: "default/line-registry",
		}},
	}
	if _, err := client.OperationsV1alpha2().ImagePrePullJobs().Create(context.Background(), pj, metav1.CreateOptions{}); err != nil {
		fatalf(t, "create ImagePrePullJob: %v", err)
	}
	var last opsv1.ImagePrePullJobStatus
	if !poll(cloudJobBound, func() (bool, error) {
		got, err := client.OperationsV1alpha2().ImagePrePullJobs().Get(context.Background(), pj.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = got.Status
		return len(last.NodeStatus) == 1 && (last.NodeStatus[0].Phase == opsv1.NodeTaskPhaseSuccessful || last.NodeStatus[0].Phase == opsv1.NodeTaskPhaseFailure), nil
	}) {
		j.dumpLog()
		fatalf(t, "ImagePrePullJob windows-prepull did not end within %s; status %s", cloudJobBound, jsonOf(last))
	}
	pulled := time.Since(begin)
	t.Logf("ImagePrePullJob windows-prepull: ended after %s\n%s", fmtDur(pulled), indent(jsonOf(last)))
	pn := last.NodeStatus[0]
	var flow []string
	for _, a := range pn.ActionFlow {
		flow = append(flow, string(a.Action)+"="+string(a.Status))
	}
	images := map[string]string{}
	for _, st := range pn.ImageStatus {
		images[st.Image] = string(st.Status)
	}
	if strings.Join(flow, " ") != "Check=True Pull=False" || pn.Phase != opsv1.NodeTaskPhaseFailure ||
		images[prePullGood] != "True" || images[prePullMissing] != "False" {
		j.dumpLog()
		fatalf(t, "ImagePrePullJob windows-prepull: phase %s, actions %v, images %v; want Failure, Check=True Pull=False, %s True and %s False",
			pn.Phase, flow, images, prePullGood, prePullMissing)
	}
	// The registry takes the secret's credentials only: the pulled image
	// shows they reached the CRI pull; the pull lines name the user.
	for _, img := range []string{prePullGood, prePullMissing} {
		if line := "action: PullImage image=" + img + " user=" + prePullUser; !p.logContains(line) {
			errorf(t, "the fake runtime never logged %q: the pull secret did not reach the node's CRI pull", line)
		}
	}
	figures = append(figures, "ImagePrePullJob of 2 images (1 missing) "+fmtDur(pulled))

	// 5. A pod held by edge.kubeedge.io/hold-upgrade: placed on the node
	// the way the scheduler places it (a binding), it reaches the node as
	// an update of a Pending pod, which the node holds until an
	// administrator releases it with `edgecore.exe upgrade unhold`.
	held, waited := j.heldPod("held-app")
	figures = append(figures, "held pod shows HeldUpgrade "+fmtDur(waited))
	r := j.h.edgecore(t, time.Minute, "upgrade", "unhold", "no-such-pod")
	t.Logf("edgecore.exe upgrade unhold no-such-pod: exit %d\n%s", r.code, indent(r.out))
	if r.code == 0 || !strings.Contains(r.out, `Not found: "default/no-such-pod"`) || !strings.Contains(r.out, "the node holds default/"+held) {
		fatalf(t, "edgecore.exe upgrade unhold of a pod the node does not hold: exit %d, output %q; want a refusal naming the pod and the held one", r.code, r.out)
	}
	begin = time.Now()
	r = j.h.edgecore(t, time.Minute, "upgrade", "unhold", held, "--namespace", "default")
	t.Logf("edgecore.exe upgrade unhold %s: exit %d after %s\n%s", held, r.code, fmtDur(r.duration), indent(r.out))
	if r.code != 0 || !strings.Contains(r.out, "edgecore handed them to the kubelet") {
		j.dumpLog()
		fatalf(t, "edgecore.exe upgrade unhold %s: exit %d, output %q", held, r.code, r.out)
	}
	eventually(t, readyBound, "held pod "+held+" Running after unhold", c.podRunning(held))
	released := time.Since(begin)
	t.Logf("pod %s: Running %s after edgecore.exe upgrade unhold", held, fmtDur(released))
	figures = append(figures, "held pod Running after unhold "+fmtDur(released))
	// The held pod ran once, when released; the steady one never again.
	resynced(t, p.log, held, begin)
	wantCreated(t, p.log, "the cloud jobs", map[string]created{"default/steady": {1, 1}, "default/" + held: {1, 1}})
	t.Logf("cloud jobs figures: %s", strings.Join(figures, "; "))
}

// heldPod creates a Windows pod annotated edge.kubeedge.io/hold-upgrade
// and binds it to the node as the scheduler would (the test cluster has
// none), then waits until the cloud shows it Pending with the node's
// HeldUpgrade condition, and checks that it stays so.
func (j *journey) heldPod(name string) (string, time.Duration) {
	t, c := j.t, j.c
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{upgrade.HoldUpgradeAnnotation: "true"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "windows"},
			Containers: []corev1.Container{{Name: "app", Image: "mcr.microsoft.com/windows/servercore:ltsc2022",
				Command: []string{"cmd", "/c", "ping -t localhost"}, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	begin := time.Now()
	if _, err := c.client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Target: corev1.ObjectReference{Kind: "Node", Name: j.node}}
	if err := c.client.CoreV1().Pods("default").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		fatalf(t, "bind pod %s to %s: %v", name, j.node, err)
	}
	heldUp := func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == "HeldUpgrade" && cond.Status == corev1.ConditionTrue && p.Status.Phase == corev1.PodPending {
				return true, nil
			}
		}
		return false, fmt.Errorf("phase %s, conditions %s", p.Status.Phase, jsonOf(p.Status.Conditions))
	}
	eventually(t, readyBound, "pod "+name+" held by the node", heldUp)
	shown := time.Since(begin)
	// Nothing starts it without the operator.
	time.Sleep(10 * time.Second)
	if ok, err := heldUp(); !ok {
		j.dumpLog()
		fatalf(t, "pod %s was held, then went on without unhold: %v", name, err)
	}
	t.Logf("pod %s: Pending with HeldUpgrade %s after it was bound to %s, and still 10 s later", name, fmtDur(shown), j.node)
	return name, shown
}

// configJob creates a ConfigUpdateJob for the node and waits until the
// node's task ends; it returns the node's status.
func (j *journey) configJob(client kubeedgeclient.Interface, name string, fields map[string]string) opsv1.ConfigUpdateJobNodeTaskStatus {
	t := j.t
	t.Helper()
	job := &opsv1.ConfigUpdateJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       opsv1.ConfigUpdateJobSpec{NodeNames: []string{j.node}, UpdateFields: fields},
	}
	if _, err := client.OperationsV1alpha2().ConfigUpdateJobs().Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		fatalf(t, "create ConfigUpdateJob %s: %v", name, err)
	}
	var last opsv1.ConfigUpdateJobStatus
	if !poll(cloudJobBound, func() (bool, error) {
		got, err := client.OperationsV1alpha2().ConfigUpdateJobs().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = got.Status
		return len(last.NodeStatus) == 1 && (last.NodeStatus[0].Phase == opsv1.NodeTaskPhaseSuccessful || last.NodeStatus[0].Phase == opsv1.NodeTaskPhaseFailure), nil
	}) {
		j.dumpLog()
		j.dumpUpgradeLog()
		fatalf(t, "ConfigUpdateJob %s did not end within %s; status %s", name, cloudJobBound, jsonOf(last))
	}
	t.Logf("ConfigUpdateJob %s: ended\n%s", name, indent(jsonOf(last)))
	if strings.Contains(jsonOf(last), j.token) {
		fatalf(t, "ConfigUpdateJob %s: the status holds the join token", name)
	}
	return last.NodeStatus[0]
}

func (j *journey) wantConfigFlow(ns opsv1.ConfigUpdateJobNodeTaskStatus, want string, phase opsv1.NodeTaskPhase) {
	j.t.Helper()
	var flow []string
	for _, a := range ns.ActionFlow {
		flow = append(flow, string(a.Action)+"="+string(a.Status))
	}
	if strings.Join(flow, " ") != want || ns.Phase != phase {
		j.dumpLog()
		j.dumpUpgradeLog()
		fatalf(j.t, "ConfigUpdateJob: node phase %s, actions %v; want %s, %s", ns.Phase, flow, phase, want)
	}
}

func jsonOf(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
