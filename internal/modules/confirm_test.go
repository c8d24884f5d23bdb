package modules

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager/actions"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// A NodeUpgradeJob with requireConfirmation, as upstream's task manager
// drives it: the node reports Check and WaitingConfirmation and stops;
// the job's status shows the wait. Once the operator confirms on the
// host, the node goes on from BackUp; before that, nothing is backed up
// or replaced.
func TestNodeUpgradeJobWaitsForConfirmation(t *testing.T) {
	dir := testdir.New(t, "modules-")
	env := upgrade.Env{GOOS: runtime.GOOS, FS: hostfs.OS{}, Clock: clock.Real{}, Paths: upgrade.Paths{
		StateDir: dir, Waiting: filepath.Join(dir, "waiting.json"), Confirmed: filepath.Join(dir, "confirmed.json"),
	}}
	var (
		mu   sync.Mutex
		sent []string
		ran  = make(chan string, 4)
	)
	statuses := jobStatuses{send: func(_ taskmsg.Resource, m taskmsg.UpstreamMessage) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, m.Action+"="+map[bool]string{true: "True", false: "False"}[m.Succ])
	}, sleep: func(context.Context, time.Duration) error { return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, h := nodeUpgradeJobRunner(ctx, &upgrade.Jobs{Env: env}, "v0.1.0", statuses)
	h.connected = func() bool { return true }
	step := func(name string, resp *nodeJobResponse) actions.ActionFun {
		return func(_ context.Context, job, node string, ser actions.SpecSerializer) actions.ActionResponse {
			ran <- name + " " + job + " " + node + " " + ser.GetSpec().(*operationsv1alpha2.NodeUpgradeJobSpec).Version
			return resp
		}
	}
	r.Actions[actionCheck] = step("Check", &nodeJobResponse{})
	r.Actions[actionBackUp] = step("BackUp", &nodeJobResponse{from: "v0.1.0", to: "v0.2.0"})
	r.Actions[actionUpgrade] = step("Upgrade", &nodeJobResponse{deferred: true})

	r.RunAction(ctx, "to-v0.2.0", "win-1", actionCheck, []byte(`{"version":"v0.2.0","requireConfirmation":true}`))
	if got := <-ran; got != "Check to-v0.2.0 win-1 v0.2.0" {
		t.Fatalf("ran %q", got)
	}
	mu.Lock()
	if strings.Join(sent, " ") != "Check=True WaitingConfirmation=True" {
		t.Fatalf("statuses %v, want Check=True WaitingConfirmation=True and then the wait", sent)
	}
	mu.Unlock()
	w, err := upgrade.LoadWaiting(env)
	if err != nil || w == nil || w.Job != "to-v0.2.0" || w.Node != "win-1" || w.Version != "v0.2.0" {
		t.Fatalf("waiting job %+v, %v", w, err)
	}
	select {
	case got := <-ran:
		t.Fatalf("%s ran before the confirmation", got)
	case <-time.After(1500 * time.Millisecond):
	}
	// Another job's name is refused and confirms nothing.
	if _, err := upgrade.Confirm(env, "to-v9"); err == nil || !strings.Contains(err.Error(), "--job to-v0.2.0") {
		t.Fatalf("confirming another job: %v", err)
	}
	if _, err := upgrade.Confirm(env, "to-v0.2.0"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BackUp to-v0.2.0 win-1 v0.2.0", "Upgrade to-v0.2.0 win-1 v0.2.0"} {
		select {
		case got := <-ran:
			if got != want {
				t.Fatalf("ran %q, want %q", got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s did not run after the confirmation", want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(sent, " ") != "Check=True WaitingConfirmation=True BackUp=True" {
		t.Fatalf("statuses %v", sent)
	}
	if w, err := upgrade.LoadWaiting(env); w != nil || err != nil {
		t.Fatalf("the job still waits after it went on: %+v %v", w, err)
	}
}

// Without requireConfirmation the job does not stop.
func TestNodeUpgradeJobWithoutConfirmationGoesOn(t *testing.T) {
	h := &nodeJobHandler{}
	resp := h.confirm(context.Background(), "j", "n", specHolder{&operationsv1alpha2.NodeUpgradeJobSpec{Version: "v0.2.0"}})
	if resp.Error() != nil || resp.NeedInterrupt() {
		t.Fatalf("WaitingConfirmation without requireConfirmation: err %v, interrupt %v", resp.Error(), resp.NeedInterrupt())
	}
}
