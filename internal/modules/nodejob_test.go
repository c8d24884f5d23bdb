package modules

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// What the cloud's v1alpha2 task manager makes of the statuses: a status
// ends the node's task when its action has no next step for its outcome
// (cloud/pkg/taskmanager/upstream), so the sequences below must end on
// such an action, and only there.
func final(t *testing.T, m taskmsg.UpstreamMessage) bool {
	t.Helper()
	a := actionflow.FlowNodeUpgradeJob.Find(m.Action)
	if a == nil {
		t.Fatalf("action %q is not in upstream's NodeUpgradeJob flow", m.Action)
	}
	return m.Succ && a.NextSuccessful == nil || !m.Succ && a.NextFailure == nil
}

func TestNodeJobMessagesEndTheNodeTask(t *testing.T) {
	cases := []struct {
		name   string
		report upgrade.Report
		want   []string // action=succ, in order
		extend string   // of the last message: historic,current
	}{
		{"upgraded", upgrade.Report{Event: "Upgrade", Success: true, From: "v0.1.0", To: "v0.2.0"},
			[]string{"Upgrade=true"}, "v0.1.0,v0.2.0"},
		{"aborted before the swap", upgrade.Report{Event: "Upgrade", Reason: "upgrade to v0.3.0 failed before the binary was replaced", From: "v0.2.0", To: "v0.3.0"},
			[]string{"Upgrade=false", "RollBack=true"}, "v0.3.0,v0.2.0"},
		{"rolled back", upgrade.Report{Event: "Rollback", Success: true, Reason: "upgrade to v0.3.0 failed and was rolled back to v0.2.0: exit 1", From: "v0.2.0", To: "v0.3.0"},
			[]string{"Upgrade=false", "RollBack=true"}, "v0.3.0,v0.2.0"},
		{"rollback failed", upgrade.Report{Event: "Rollback", Reason: "upgrade to v0.3.0 failed and so did the rollback to v0.2.0", From: "v0.2.0", To: "v0.3.0"},
			[]string{"Upgrade=false", "RollBack=false"}, "v0.3.0,v0.2.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs := nodeJobMessages(c.report)
			var got []string
			for i, m := range msgs {
				got = append(got, m.Action+"="+map[bool]string{true: "true", false: "false"}[m.Succ])
				if f := final(t, m); f != (i == len(msgs)-1) {
					t.Errorf("message %d (%s) final=%v: the cloud would end the task too early or never", i, got[i], f)
				}
				if !m.Succ && !strings.Contains(m.Reason, "v0.3.0") {
					t.Errorf("failed %s without the reason: %q", m.Action, m.Reason)
				}
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("statuses %v, want %v", got, c.want)
			}
			if last := msgs[len(msgs)-1]; last.Extend != c.extend {
				t.Fatalf("versions %q, want %q (historic,current)", last.Extend, c.extend)
			}
		})
	}
}

func TestRequestOfV1alpha2Job(t *testing.T) {
	spec := &operationsv1alpha2.NodeUpgradeJobSpec{
		Version:           "v1.23.2",
		ImageDigestGetter: &operationsv1alpha2.ImageDigestGetter{AMD64: "sha256:ab", ARM64: "sha256:cd"},
	}
	r := requestOf("to-v1.23.2", "win-1", spec)
	want := upgrade.Request{Job: upgrade.Job{TaskID: "to-v1.23.2", TaskType: "nodeupgradejob", Node: "win-1"}, Version: "v1.23.2", Digest: "sha256:ab"}
	if r != want {
		t.Fatalf("request %+v, want %+v", r, want)
	}
	if r := requestOf("j", "n", &operationsv1alpha2.NodeUpgradeJobSpec{Version: "v1"}); r.Digest != "" {
		t.Fatalf("a job without a digest getter gave digest %q", r.Digest)
	}
}

// The runner as upstream's task manager drives it: one message names the
// first action and the runner goes through the flow, reporting each step.
func TestNodeUpgradeJobRunnerFlow(t *testing.T) {
	type sent struct {
		res taskmsg.Resource
		msg taskmsg.UpstreamMessage
	}
	run := func(spec string, overrides map[string]actions.ActionFun) []sent {
		var out []sent
		r, _ := nodeUpgradeJobRunner(context.Background(), nil, "v0.1.0", jobStatuses{send: func(res taskmsg.Resource, m taskmsg.UpstreamMessage) {
			out = append(out, sent{res, m})
		}, sleep: func(context.Context, time.Duration) error { return nil }})
		for name, f := range overrides {
			r.Actions[name] = f
		}
		r.RunAction(context.Background(), "job-1", "win-1", actionCheck, []byte(spec))
		return out
	}
	// A node that runs the job's version already answers at once with
	// the Upgrade's success, which ends the task.
	got := run(`{"version":"v0.1.0"}`, nil)
	if len(got) != 1 || got[0].msg.Action != actionUpgrade || !got[0].msg.Succ {
		t.Fatalf("statuses %+v, want one Upgrade success", got)
	}
	if got[0].res.ResourceType != operationsv1alpha2.ResourceNodeUpgradeJob || got[0].res.JobName != "job-1" || got[0].res.NodeName != "win-1" {
		t.Fatalf("resource %+v", got[0].res)
	}
	// A spec that is not JSON is reported as the Check's failure.
	got = run(`{`, nil)
	if len(got) != 1 || got[0].msg.Succ || !strings.Contains(got[0].msg.Reason, "not valid JSON") {
		t.Fatalf("statuses %+v, want the spec's error", got)
	}
	step := func(resp *nodeJobResponse) actions.ActionFun {
		return func(_ context.Context, _, _ string, _ actions.SpecSerializer) actions.ActionResponse { return resp }
	}
	// An upgrade handed to its driver is reported after the restart: the
	// runner sends nothing for it and does not roll back.
	got = run(`{"version":"v0.2.0"}`, map[string]actions.ActionFun{
		actionCheck:   step(&nodeJobResponse{}),
		actionBackUp:  step(&nodeJobResponse{from: "v0.1.0", to: "v0.2.0"}),
		actionUpgrade: step(&nodeJobResponse{deferred: true}),
		actionRoll:    step(&nodeJobResponse{err: errors.New("must not run")}),
	})
	var names []string
	for _, s := range got {
		names = append(names, s.msg.Action)
	}
	if strings.Join(names, " ") != "Check WaitingConfirmation BackUp" {
		t.Fatalf("statuses sent %v, want Check WaitingConfirmation BackUp and nothing for the deferred Upgrade", names)
	}
	if got[2].msg.Extend != "v0.1.0,v0.2.0" {
		t.Fatalf("BackUp's versions %q", got[2].msg.Extend)
	}
	// An upgrade refused before anything was replaced ends the task: its
	// failure, then a RollBack without work; the runner's own RollBack
	// (which would restart the service) does not run.
	refused := upgrade.Report{Event: "Upgrade", Reason: "upgrade to v0.2.0 failed before the binary was replaced; v0.1.0 still runs: disk full", From: "v0.1.0", To: "v0.2.0"}
	got = run(`{"version":"v0.2.0"}`, map[string]actions.ActionFun{
		actionCheck:   step(&nodeJobResponse{}),
		actionBackUp:  step(&nodeJobResponse{}),
		actionUpgrade: step(&nodeJobResponse{err: errors.New(refused.Reason), interrupt: true, messages: nodeJobMessages(refused)}),
		actionRoll:    step(&nodeJobResponse{err: errors.New("must not run")}),
	})
	names = nil
	for _, s := range got {
		names = append(names, s.msg.Action+"="+map[bool]string{true: "true", false: "false"}[s.msg.Succ])
	}
	if strings.Join(names, " ") != "Check=true WaitingConfirmation=true BackUp=true Upgrade=false RollBack=true" {
		t.Fatalf("statuses sent %v", names)
	}
	if !final(t, got[len(got)-1].msg) || !strings.Contains(got[3].msg.Reason, "disk full") {
		t.Fatalf("the refusal does not end the task with its reason: %+v", got[3:])
	}
}

// A node that does not run as the service (a console edgecore, or a
// build for another OS in a fleet) refuses a NodeUpgradeJob at Check with
// that reason, before it reads upgrade settings or fetches anything: the
// fleet's Linux builds, which have no upgrade.yaml, answered "no package
// repository is configured", a fix the operator would make only to be
// refused again.
func TestNodeUpgradeJobCheckRefusesOutsideTheServiceFirst(t *testing.T) {
	fetched := false
	jobs := &upgrade.Jobs{
		Service:   "edgecore",
		InService: func() (bool, error) { return false, nil },
		Fetch: func(context.Context, string, string, int64) error {
			fetched = true
			return nil
		},
	}
	var got []taskmsg.UpstreamMessage
	r, _ := nodeUpgradeJobRunner(context.Background(), jobs, "v1.23.1", jobStatuses{send: func(_ taskmsg.Resource, m taskmsg.UpstreamMessage) {
		got = append(got, m)
	}, sleep: func(context.Context, time.Duration) error { return nil }})
	r.RunAction(context.Background(), "job-1", "linux-1", actionCheck, []byte(`{"version":"v1.23.2"}`))
	if len(got) != 1 || got[0].Action != actionCheck || got[0].Succ {
		t.Fatalf("statuses %+v, want one failed Check", got)
	}
	if !strings.Contains(got[0].Reason, `does not run as the Windows service "edgecore"`) || strings.Contains(got[0].Reason, "repository") {
		t.Errorf("the Check's reason %q does not say (only) that edgecore is not the service", got[0].Reason)
	}
	if fetched {
		t.Error("the package was fetched for a node that cannot take the upgrade")
	}
}
