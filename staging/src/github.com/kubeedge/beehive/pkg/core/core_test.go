package core

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/beehive/pkg/core/model"
)

type testModule struct {
	name, group string
	enabled     bool
	start       func()
	policy      *ModuleRestartPolicy
}

func (m *testModule) Name() string  { return m.name }
func (m *testModule) Group() string { return m.group }
func (m *testModule) Enable() bool  { return m.enabled }
func (m *testModule) Start()        { m.start() }

func (m *testModule) RestartPolicy() *ModuleRestartPolicy { return m.policy }

// starts records when a module's Start ran.
type starts struct {
	mu sync.Mutex
	at []time.Time
}

func (s *starts) add() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Now())
	return len(s.at)
}

func (s *starts) get() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

// waitStarts waits up to d for n starts and returns what it saw.
func (s *starts) wait(n int, d time.Duration) []time.Time {
	deadline := time.Now().Add(d)
	for {
		got := s.get()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkGaps fails t unless the waits between starts are about want (in
// units of the shortened second).
func checkGaps(t *testing.T, name string, got []time.Time, want []time.Duration) {
	t.Helper()
	if len(got) < len(want)+1 {
		t.Fatalf("%s started %d times, want %d", name, len(got), len(want)+1)
	}
	for i, w := range want {
		gap := got[i+1].Sub(got[i])
		if gap < w*second || gap > w*second+time.Second {
			t.Errorf("%s: restart %d came after %v, want about %v", name, i+1, gap, w*second)
		}
	}
}

// The whole lifecycle runs in one test because shutdown cancels the one
// process-wide context for good.
func TestLifecycle(t *testing.T) {
	second = 10 * time.Millisecond
	EnableModuleRestart()
	if !IsModuleRestartEnabled() {
		t.Fatal("restart not enabled")
	}

	echoReturned := make(chan error, 1)
	Register(&testModule{name: "echo", group: "meta", enabled: true, start: func() {
		for {
			msg, err := beehiveContext.Receive("echo")
			if err != nil {
				echoReturned <- err
				return
			}
			beehiveContext.SendResp(*msg.NewRespByMessage(&msg, msg.GetContent()))
		}
	}})

	// flaky brings no policy: EnableModuleRestart restarts it whether it
	// returns or panics, as KubeEdge v1.20's bus did.
	var flaky starts
	Register(&testModule{name: "flaky", group: "hub", enabled: true, start: func() {
		if flaky.add()%2 == 0 {
			panic("flaky module failed")
		}
	}})
	// Upstream v1.23's policies. OnFailure: a return ends the module, a
	// panic restarts it; the wait grows by the rate up to the limit.
	var onFailure starts
	Register(&testModule{name: "onfailure", group: "hub", enabled: true, start: func() {
		if onFailure.add() < 4 {
			panic("not yet")
		}
	}, policy: &ModuleRestartPolicy{RestartType: RestartTypeOnFailure, IntervalSecond: 2,
		IntervalTimeGrowthRate: 3, RestartIntervalLimit: 10 * second}})
	// Retries bound the restarts; the error handler gets the last failure.
	var limited starts
	handled := make(chan error, 2)
	Register(&testModule{name: "limited", group: "hub", enabled: true, start: func() {
		panic(fmt.Sprintf("failure %d", limited.add()))
	}, policy: &ModuleRestartPolicy{RestartType: RestartTypeAlways, Retries: 2,
		ErrorHandler: func(err error) { handled <- err }}})
	// drain takes one message per start and returns: each later message
	// reaches it only if the restart kept its inbox.
	drained := make(chan interface{}, 3)
	Register(&testModule{name: "drain", group: "hub", enabled: true, start: func() {
		if msg, err := beehiveContext.Receive("drain"); err == nil {
			drained <- msg.GetContent()
		}
	}})
	Register(&testModule{name: "off", group: "hub", enabled: false, start: func() {
		t.Error("a disabled module was started")
	}})

	mods := GetModules()
	if _, ok := mods["echo"]; !ok || len(mods) != 5 {
		t.Fatalf("enabled modules: %v", mods)
	}
	if _, ok := mods["off"]; ok {
		t.Fatal("a disabled module is listed as enabled")
	}
	if mods["echo"].GetModule().Name() != "echo" {
		t.Fatal("GetModule returns the wrong module")
	}

	// Run is StartModules then GracefulShutdown; starting synchronously
	// makes the inboxes exist before the first send.
	StartModules()
	runReturned := make(chan struct{})
	go func() { GracefulShutdown(); close(runReturned) }()

	// Sent at once, before the first restart: the second and third wait in
	// the inbox while drain is down.
	for _, c := range []string{"one", "two", "three"} {
		beehiveContext.Send("drain", *model.NewMessage("").FillBody(c))
	}

	resp, err := beehiveContext.SendSync("echo", *model.NewMessage("").FillBody("hi"), 2*time.Second)
	if err != nil || resp.GetContent() != "hi" {
		t.Fatalf("SendSync through a started module: %v %v", resp.GetContent(), err)
	}

	// Without a policy of its own, restarts (panicking or not) follow a
	// back-off that doubles from 1 s up to 30 s.
	checkGaps(t, "flaky", flaky.wait(6, 5*time.Second), []time.Duration{1, 2, 4, 8, 16})
	// 2 s, then 6 s, then the 10 s limit; the fourth start returns and is
	// not restarted.
	checkGaps(t, "onfailure", onFailure.wait(4, 5*time.Second), []time.Duration{2, 6, 10})
	// A constant 1 s (no growth rate), two restarts, then the handler.
	checkGaps(t, "limited", limited.wait(3, 5*time.Second), []time.Duration{1, 1})
	select {
	case err := <-handled:
		if err == nil || !strings.Contains(err.Error(), "failure 3") {
			t.Fatalf("error handler got %v, want the third start's failure", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the error handler was not called when the retries ran out")
	}
	time.Sleep(30 * second)
	if n := len(onFailure.get()); n != 4 {
		t.Errorf("onfailure started %d times; a module that returned under OnFailure was restarted", n)
	}
	if n := len(limited.get()); n != 3 {
		t.Errorf("limited started %d times, want 1 + 2 retries", n)
	}
	if len(handled) != 0 {
		t.Error("the error handler was called twice")
	}

	// A restart by our back-off keeps the queue (upstream's AddModule would
	// have emptied it).
	for _, want := range []string{"one", "two", "three"} {
		select {
		case got := <-drained:
			if got != want {
				t.Fatalf("drain got %v, want %v", got, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%q, queued while drain restarted, never reached it", want)
		}
	}

	Shutdown("test")
	Shutdown("a second request must not block")
	select {
	case <-runReturned:
	case <-time.After(2 * time.Second):
		t.Fatal("GracefulShutdown did not return after Shutdown")
	}
	select {
	case err := <-echoReturned:
		if err == nil {
			t.Fatal("Receive returned no error at shutdown")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a module stayed blocked in Receive after shutdown")
	}
	if beehiveContext.GetContext().Err() == nil {
		t.Fatal("global context still live after shutdown")
	}

	before := len(flaky.get())
	time.Sleep(200 * time.Millisecond)
	if after := len(flaky.get()); after != before {
		t.Fatalf("module restarted %d times after shutdown", after-before)
	}
}

// Upstream returns the registry itself, and its metamanager test reads a map
// it took before Register.
func TestGetModulesIsTheLiveRegistry(t *testing.T) {
	mods := GetModules()
	Register(&testModule{name: "late", group: "g", enabled: true, start: func() {}})
	t.Cleanup(func() {
		registryMu.Lock()
		delete(modules, "late")
		registryMu.Unlock()
	})
	info, ok := mods["late"]
	if !ok || info.GetModule().Name() != "late" {
		t.Fatal("a map taken before Register does not show the module")
	}
	if _, ok := snapshot()["late"]; !ok {
		t.Fatal("the bus's own view misses the module")
	}
}
