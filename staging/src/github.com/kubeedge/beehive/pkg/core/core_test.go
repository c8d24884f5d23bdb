package core

import (
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
}

func (m *testModule) Name() string  { return m.name }
func (m *testModule) Group() string { return m.group }
func (m *testModule) Enable() bool  { return m.enabled }
func (m *testModule) Start()        { m.start() }

// The whole lifecycle runs in one test because shutdown cancels the one
// process-wide context for good.
func TestLifecycle(t *testing.T) {
	restartBackoffInitial = 20 * time.Millisecond
	restartBackoffMax = 80 * time.Millisecond
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

	var mu sync.Mutex
	var starts []time.Time
	Register(&testModule{name: "flaky", group: "hub", enabled: true, start: func() {
		mu.Lock()
		starts = append(starts, time.Now())
		n := len(starts)
		mu.Unlock()
		if n%2 == 0 {
			panic("flaky module failed")
		}
	}})
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
	if _, ok := mods["echo"]; !ok || len(mods) != 3 {
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

	// Restarts, panicking or not, follow a back-off that doubles up to the cap.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(starts)
		mu.Unlock()
		if n >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	got := append([]time.Time(nil), starts...)
	mu.Unlock()
	if len(got) < 6 {
		t.Fatalf("module restarted %d times in 5s", len(got)-1)
	}
	want := []time.Duration{20, 40, 80, 80, 80}
	for i, w := range want {
		gap := got[i+1].Sub(got[i])
		if gap < w*time.Millisecond || gap > w*time.Millisecond+time.Second {
			t.Errorf("restart %d came after %v, want about %v", i+1, gap, w*time.Millisecond)
		}
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

	mu.Lock()
	before := len(starts)
	mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	after := len(starts)
	mu.Unlock()
	if after != before {
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
