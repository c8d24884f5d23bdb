package modules

import (
	"context"
	kubeedgeversion "github.com/kubeedge/kubeedge/pkg/version"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/featuregate"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	api "github.com/kubeedge/api/apis/fsm/v1alpha1"
	commontypes "github.com/kubeedge/kubeedge/common/types"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// The health gate's "node Ready" is the kubelet's node status as the cloud
// accepted it: the answer to the kubelet's PATCH of the status.
func TestNodeStatusPatchesAreObserved(t *testing.T) {
	var r nodeReadiness
	client := fake.NewSimpleClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}})
	orig := edged.DefaultRunLiteKubelet
	defer func() { edged.DefaultRunLiteKubelet = orig }()
	var got *kubelet.Dependencies
	edged.DefaultRunLiteKubelet = func(_ context.Context, _ *kubeletoptions.KubeletServer, deps *kubelet.Dependencies, _ featuregate.FeatureGate) error {
		got = deps
		return nil
	}
	observeNodeStatus(r.observe)
	edged.DefaultRunLiteKubelet(context.Background(), nil, &kubelet.Dependencies{HeartbeatClient: client}, nil)
	if got == nil {
		t.Fatal("the kubelet was not run")
	}
	nodes := got.HeartbeatClient.CoreV1().Nodes()
	patch := func(status v1.ConditionStatus, sub ...string) {
		t.Helper()
		data := `{"status":{"conditions":[{"type":"Ready","status":"` + string(status) + `"}]}}`
		if _, err := nodes.Patch(context.Background(), "win-1", types.StrategicMergePatchType, []byte(data), metav1.PatchOptions{}, sub...); err != nil {
			t.Fatal(err)
		}
	}
	if r.Ready() {
		t.Fatal("ready before any status")
	}
	patch(v1.ConditionTrue, "status")
	if !r.Ready() {
		t.Error("a Ready status the cloud accepted was not seen")
	}
	// Other patches of the node say nothing about its status.
	patch(v1.ConditionFalse)
	if !r.Ready() {
		t.Error("a patch of the node object itself was taken for a status")
	}
	patch(v1.ConditionFalse, "status")
	if r.Ready() {
		t.Error("a NotReady status was taken for Ready")
	}
	patch(v1.ConditionTrue, "status")
	// A status the cloud did not take (the hub is down) is not Ready.
	if _, err := nodes.Patch(context.Background(), "gone", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status"); err == nil {
		t.Fatal("patching a missing node succeeded")
	}
	if r.Ready() {
		t.Error("still Ready after a status update failed")
	}
}

func TestExecutorAnswers(t *testing.T) {
	x := &upgradeExecutor{
		jobs:   &upgrade.Jobs{Env: upgrade.Env{Version: "v0.1.0"}},
		node:   "win-1",
		checks: map[string]upgrade.Request{},
	}
	item := func(v string, confirm bool) any {
		return map[string]any{"UpgradeID": "nuj", "Version": v, "RequireConfirmation": confirm}
	}
	for _, tc := range []struct {
		state string
		item  any
		want  string
	}{
		{"", item("v0.1.0", false), "Upgrade/Success"},
		{string(api.TaskInit), item("v0.1.0", false), "Upgrade/Success"},
		{string(api.TaskInit), item("v0.2.0", true), "Init/Failure"},
		{string(api.TaskInit), item("latest", false), "Init/Failure"},
	} {
		ev, err := x.Do(commontypes.NodeTaskRequest{TaskID: "nuj", Type: "upgrade", State: tc.state, Item: tc.item})
		if err != nil || ev.UniqueName() != tc.want {
			t.Errorf("state %q: %s (%s), %v; want %s", tc.state, ev.UniqueName(), ev.Msg, err, tc.want)
		}
	}
	if _, err := x.Do(commontypes.NodeTaskRequest{State: "Pause"}); err == nil || !strings.Contains(err.Error(), `step "Pause"`) {
		t.Errorf("unknown step: %v", err)
	}
	if r := x.checks["nuj"]; r.Version != "latest" || r.Job.Node != "win-1" || r.Job.TaskType != "upgrade" {
		t.Errorf("remembered request %+v", r)
	}
}

// Upstream's check reports items it does not know without failing.
func TestUpstreamCheckItems(t *testing.T) {
	if got := upstreamCheckItems([]string{"no-such-item"}); len(got) != 0 {
		t.Errorf("%v", got)
	}
}

// The upgrade agent takes everything from the node that makes it: the
// configuration path it was started with (not upstream's options
// singleton), the node's name and database, and the node's lifetime as the
// context of its background steps.
func TestNewUpgradeAgentTakesTheNodesInputs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ed := &v1alpha2.Edged{}
	ed.HostnameOverride = "win-1"
	c := &v1alpha2.EdgeCoreConfig{
		Modules:  &v1alpha2.Modules{Edged: ed},
		DataBase: &v1alpha2.DataBase{DataSource: `D:\kubeedge\edgecore.db`},
	}
	host := config.Host{GOOS: "windows"}
	d := &deps.Dependencies{Host: host, Layout: config.NewLayout(host), Executable: `D:\edgecore\edgecore.exe`, Clock: clock.Real{}}
	a := NewUpgradeAgent(ctx, d, c, `D:\kubeedge\edgecore.yaml`)
	if a.jobs.ConfigFile != `D:\kubeedge\edgecore.yaml` || a.nodeName != "win-1" || a.jobs.Executable != d.Executable || a.node.Executable != d.Executable {
		t.Errorf("agent for config %q, node %q, executable %q and %q", a.jobs.ConfigFile, a.nodeName, a.jobs.Executable, a.node.Executable)
	}
	if ds, err := a.jobs.Facts.DataSource(a.jobs.ConfigFile); err != nil || ds != `D:\kubeedge\edgecore.db` {
		t.Errorf("database %q, %v", ds, err)
	}
	if a.jobs.Context() != ctx {
		t.Error("the background steps do not run under the node's context")
	}
	// A NodeUpgradeJob names KubeEdge versions, and the cloud compares the
	// status's versions with them: the runner must answer in those, not in
	// this project's release version (e2e saw currentVersion "v0.2.0").
	if a.kubeedge != kubeedgeversion.Get().GitVersion || a.kubeedge == a.jobs.Env.Version {
		t.Errorf("jobs answered as version %q (KubeEdge %q, release %q)", a.kubeedge, kubeedgeversion.Get().GitVersion, a.jobs.Env.Version)
	}
	// Two agents share nothing: a second node's readiness is its own.
	b := NewUpgradeAgent(ctx, d, c, `D:\other.yaml`)
	a.ready.observe(&v1.Node{Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}, nil)
	if !a.node.Ready() || b.node.Ready() {
		t.Errorf("readiness: first %v, second %v", a.node.Ready(), b.node.Ready())
	}
}
