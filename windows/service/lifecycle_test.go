package service

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder collects what the service would tell the service manager.
type recorder struct {
	mu      sync.Mutex
	reports []report
}

func (r *recorder) send(rep report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
}

func (r *recorder) all() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.reports...)
}

func (r *recorder) states() []State {
	var s []State
	for _, rep := range r.all() {
		s = append(s, rep.State)
	}
	return s
}

// waitReports waits until at least n reports were sent.
func (r *recorder) waitReports(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(r.all()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d reports after 5s: %v", len(r.all()), n, r.states())
		}
		time.Sleep(time.Millisecond)
	}
}

// node stands in for edgecore: run blocks until stop is called, as
// core.Run does until core.Shutdown.
type node struct {
	stopped  chan struct{}
	once     sync.Once
	stops    atomic.Int32
	exitWith error
	linger   time.Duration // how long run takes to return after stop
}

func newNode() *node { return &node{stopped: make(chan struct{})} }

func (n *node) run() error {
	<-n.stopped
	time.Sleep(n.linger)
	return n.exitWith
}

func (n *node) stop() {
	n.stops.Add(1)
	n.once.Do(func() { close(n.stopped) })
}

type served struct {
	code uint32
	err  error
}

func start(l lifecycle, controls chan Control, rec *recorder) <-chan served {
	out := make(chan served, 1)
	go func() {
		code, err := l.serve(controls, rec.send)
		out <- served{code, err}
	}()
	return out
}

func wait(t *testing.T, out <-chan served) served {
	t.Helper()
	select {
	case s := <-out:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return within 10s")
		return served{}
	}
}

func equalStates(a, b []State) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestStopRunsTheGracefulShutdownAndReportsStopped(t *testing.T) {
	// A host shutdown sends pre-shutdown first (to a service that accepts
	// it) and Shutdown later; each is the same stop as Stop.
	for _, c := range []Control{ControlStop, ControlShutdown, ControlPreShutdown} {
		t.Run(controlName(c), func(t *testing.T) {
			n := newNode()
			rec := &recorder{}
			controls := make(chan Control)
			out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: time.Second}, controls, rec)
			rec.waitReports(t, 2)
			controls <- c
			s := wait(t, out)
			if s.code != ExitOK || s.err != nil {
				t.Errorf("serve = %d, %v; want exit code 0 and no error after a requested stop", s.code, s.err)
			}
			if got := n.stops.Load(); got != 1 {
				t.Errorf("stop called %d times, want 1", got)
			}
			want := []State{StartPending, Running, StopPending}
			if got := rec.states(); !equalStates(got, want) {
				t.Errorf("reported %v, want %v", got, want)
			}
			reps := rec.all()
			if reps[0].accepts() != 0 || reps[2].accepts() != 0 {
				t.Errorf("no control may be accepted while starting or stopping: %+v", reps)
			}
			if a := reps[1].accepts(); a&acceptStop == 0 || a&acceptShutdown == 0 || a&acceptPreShutdown == 0 {
				t.Errorf("while running the service accepts %#x, want Stop, Shutdown and pre-shutdown", a)
			}
			if reps[2].WaitHint <= 0 || reps[2].CheckPoint == 0 {
				t.Errorf("stop-pending report %+v has no wait hint or check point", reps[2])
			}
		})
	}
}

func TestInterrogateIsAnsweredWithTheCurrentState(t *testing.T) {
	n := newNode()
	rec := &recorder{}
	controls := make(chan Control)
	out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: time.Second}, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlInterrogate
	rec.waitReports(t, 3)
	if got := rec.all()[2]; got.State != Running || !got.Accepting {
		t.Errorf("Interrogate answered with %+v, want running and accepting", got)
	}
	if n.stops.Load() != 0 {
		t.Error("Interrogate stopped the node")
	}
	controls <- ControlStop
	wait(t, out)
}

func TestRunFailingOnItsOwnExitsWithAnErrorCode(t *testing.T) {
	boom := errors.New("database is locked")
	rec := &recorder{}
	stops := 0
	code, err := lifecycle{
		run:         func() error { return boom },
		stop:        func() { stops++ },
		stopTimeout: time.Second, progress: time.Second,
	}.serve(make(chan Control), rec.send)
	if code != ExitRunFailed {
		t.Errorf("exit code = %d, want %d so that the recovery actions restart the service", code, ExitRunFailed)
	}
	if !errors.Is(err, boom) {
		t.Errorf("error %v does not carry run's error", err)
	}
	if stops != 0 {
		t.Error("stop called although nobody asked to stop")
	}
}

func TestRunReturningOnItsOwnIsAFailure(t *testing.T) {
	code, err := lifecycle{
		run: func() error { return nil }, stop: func() {},
		stopTimeout: time.Second, progress: time.Second,
	}.serve(make(chan Control), func(report) {})
	if code != ExitUnexpectedStop || err == nil {
		t.Errorf("serve = %d, %v; want exit code %d and an error", code, err, ExitUnexpectedStop)
	}
}

func TestRunFailingDuringARequestedStopStillExitsCleanly(t *testing.T) {
	n := newNode()
	n.exitWith = errors.New("cleanup of edged failed")
	rec := &recorder{}
	controls := make(chan Control)
	out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: time.Second}, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlStop
	s := wait(t, out)
	if s.code != ExitOK {
		t.Errorf("exit code = %d, want 0: a non-zero code would make Windows restart a service the operator stopped", s.code)
	}
	if !errors.Is(s.err, n.exitWith) {
		t.Errorf("error %v does not carry run's error", s.err)
	}
}

func TestStopIsBoundedWhenRunDoesNotReturn(t *testing.T) {
	rec := &recorder{}
	controls := make(chan Control)
	hang := make(chan struct{})
	defer close(hang)
	l := lifecycle{
		run:         func() error { <-hang; return nil },
		stop:        func() { <-hang }, // a stop that blocks too
		stopTimeout: 100 * time.Millisecond,
		progress:    20 * time.Millisecond,
	}
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	began := time.Now()
	controls <- ControlStop
	s := wait(t, out)
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("stop took %v with a 100ms bound", took)
	}
	if s.code != ExitOK || s.err == nil || !strings.Contains(s.err.Error(), "did not finish shutting down within 100ms") {
		t.Errorf("serve = %d, %v; want exit code 0 and an error naming the bound", s.code, s.err)
	}
}

func TestSlowStopReportsProgress(t *testing.T) {
	n := newNode()
	n.linger = 200 * time.Millisecond
	rec := &recorder{}
	controls := make(chan Control)
	out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: 20 * time.Millisecond}, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlStop
	rec.waitReports(t, 4)
	// Interrogate and a second Stop while stopping.
	controls <- ControlInterrogate
	controls <- ControlStop
	s := wait(t, out)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if n.stops.Load() != 1 {
		t.Errorf("stop called %d times, want 1 even after a second Stop", n.stops.Load())
	}
	var last uint32
	pending := 0
	for _, r := range rec.all()[2:] {
		if r.State != StopPending {
			t.Fatalf("report %+v after the stop request, want stop-pending only", r)
		}
		if r.CheckPoint < last {
			t.Errorf("check point went back from %d to %d", last, r.CheckPoint)
		}
		last = r.CheckPoint
		pending++
	}
	if pending < 3 || last < 3 {
		t.Errorf("%d stop-pending reports up to check point %d over 200ms at 20ms intervals; want progress", pending, last)
	}
}

func TestShutdownAfterPreShutdownChangesNothing(t *testing.T) {
	n := newNode()
	n.linger = 100 * time.Millisecond
	rec := &recorder{}
	controls := make(chan Control)
	out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: 20 * time.Millisecond}, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlPreShutdown
	rec.waitReports(t, 3)
	// Windows sends Shutdown to every service still running after the
	// pre-shutdown phase.
	controls <- ControlShutdown
	s := wait(t, out)
	if s.code != ExitOK || s.err != nil {
		t.Errorf("serve = %d, %v; want a clean stop", s.code, s.err)
	}
	if n.stops.Load() != 1 {
		t.Errorf("stop called %d times, want 1", n.stops.Load())
	}
}

func TestPreShutdownStopIsBoundedToo(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	l := lifecycle{run: func() error { <-hang; return nil }, stop: func() {}, stopTimeout: 50 * time.Millisecond, progress: 10 * time.Millisecond}
	controls := make(chan Control)
	rec := &recorder{}
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlPreShutdown
	s := wait(t, out)
	if s.code != ExitOK || s.err == nil || !strings.Contains(s.err.Error(), "within 50ms of the system pre-shutdown request") {
		t.Errorf("serve = %d, %v; want exit code 0 and an error naming the bound and the pre-shutdown", s.code, s.err)
	}
}

// podStopper stands in for the kubelet's node shutdown manager: Run
// records when it ran, whether the node was still running then, and takes
// as long as the pods' grace periods would.
type podStopper struct {
	n        *node
	takes    time.Duration
	err      error
	runs     atomic.Int32
	nodeUp   atomic.Bool // the node had not been told to stop when Run began
	finished atomic.Int64
}

func (p *podStopper) run() error {
	p.runs.Add(1)
	p.nodeUp.Store(p.n.stops.Load() == 0)
	time.Sleep(p.takes)
	p.finished.Store(time.Now().UnixNano())
	return p.err
}

// stopAt records when the node was told to stop.
type stopAt struct {
	n  *node
	at atomic.Int64
}

func (s *stopAt) stop() {
	s.at.Store(time.Now().UnixNano())
	s.n.stop()
}

func withNodeShutdown(n *node, p *podStopper, grace time.Duration) (lifecycle, *stopAt) {
	s := &stopAt{n: n}
	return lifecycle{
		run: n.run, stop: s.stop,
		nodeShutdown:      func() *NodeShutdown { return &NodeShutdown{Run: p.run, Grace: grace} },
		nodeShutdownSlack: 50 * time.Millisecond,
		stopTimeout:       5 * time.Second, progress: 20 * time.Millisecond,
	}, s
}

// A host shutdown stops the pods first, with the node still running (the
// kubelet reports the node and the pods' statuses through it), and only
// then stops the node; progress is reported all along.
func TestHostShutdownStopsThePodsBeforeTheNode(t *testing.T) {
	for _, c := range []Control{ControlPreShutdown, ControlShutdown} {
		t.Run(controlName(c), func(t *testing.T) {
			n := newNode()
			pods := &podStopper{n: n, takes: 200 * time.Millisecond}
			l, stopped := withNodeShutdown(n, pods, time.Second)
			rec := &recorder{}
			controls := make(chan Control)
			out := start(l, controls, rec)
			rec.waitReports(t, 2)
			controls <- c
			s := wait(t, out)
			if s.code != ExitOK || s.err != nil {
				t.Fatalf("serve = %d, %v; want a clean stop", s.code, s.err)
			}
			if pods.runs.Load() != 1 || !pods.nodeUp.Load() {
				t.Fatalf("node shutdown ran %d times, with the node running: %v; want once, before the node stopped", pods.runs.Load(), pods.nodeUp.Load())
			}
			if stopped.at.Load() < pods.finished.Load() {
				t.Error("the node was stopped before its pods were")
			}
			var pending int
			for _, r := range rec.all()[2:] {
				if r.State != StopPending {
					t.Fatalf("report %+v during the host shutdown, want stop-pending only", r)
				}
				pending++
			}
			if pending < 5 {
				t.Errorf("%d stop-pending reports over 200ms of pod shutdown at 20ms intervals; want progress", pending)
			}
		})
	}
}

// An operator's Stop stops edgecore and leaves the pods running, as
// before: the node shutdown is for host shutdowns only.
func TestStopLeavesThePodsAlone(t *testing.T) {
	n := newNode()
	pods := &podStopper{n: n}
	l, _ := withNodeShutdown(n, pods, time.Second)
	rec := &recorder{}
	controls := make(chan Control)
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlStop
	if s := wait(t, out); s.code != ExitOK || s.err != nil {
		t.Fatalf("serve = %d, %v", s.code, s.err)
	}
	if pods.runs.Load() != 0 {
		t.Error("an operator's Stop ran the node shutdown")
	}
	if n.stops.Load() != 1 {
		t.Errorf("stop called %d times, want 1", n.stops.Load())
	}
}

// Windows sends Shutdown after the pre-shutdown phase, and Interrogate at
// any time: neither runs the node shutdown a second time.
func TestShutdownDuringTheNodeShutdownChangesNothing(t *testing.T) {
	n := newNode()
	pods := &podStopper{n: n, takes: 200 * time.Millisecond}
	l, _ := withNodeShutdown(n, pods, time.Second)
	rec := &recorder{}
	controls := make(chan Control)
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlPreShutdown
	rec.waitReports(t, 3)
	controls <- ControlShutdown
	controls <- ControlInterrogate
	controls <- ControlStop
	if s := wait(t, out); s.code != ExitOK || s.err != nil {
		t.Fatalf("serve = %d, %v", s.code, s.err)
	}
	if pods.runs.Load() != 1 || n.stops.Load() != 1 {
		t.Errorf("node shutdown ran %d times and stop %d times, want once each", pods.runs.Load(), n.stops.Load())
	}
}

// A node shutdown that overruns its grace periods and the slack does not
// keep the node from stopping, nor the service from stopping cleanly.
func TestNodeShutdownIsBoundedByItsGracePeriods(t *testing.T) {
	n := newNode()
	hang := make(chan struct{})
	defer close(hang)
	pods := &podStopper{n: n}
	l, stopped := withNodeShutdown(n, pods, 100*time.Millisecond)
	l.nodeShutdown = func() *NodeShutdown {
		return &NodeShutdown{Run: func() error { <-hang; return nil }, Grace: 100 * time.Millisecond}
	}
	rec := &recorder{}
	controls := make(chan Control)
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	began := time.Now()
	controls <- ControlPreShutdown
	s := wait(t, out)
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("the host shutdown took %v with a 150ms bound on the pods", took)
	}
	if s.code != ExitOK || s.err == nil || !strings.Contains(s.err.Error(), "not all stopped within 150ms of the system pre-shutdown request") {
		t.Errorf("serve = %d, %v; want exit code 0 and an error naming the bound", s.code, s.err)
	}
	if stopped.at.Load() == 0 {
		t.Error("the node was not stopped after the node shutdown overran")
	}
}

func TestNodeShutdownErrorIsReportedAndTheNodeStillStops(t *testing.T) {
	n := newNode()
	pods := &podStopper{n: n, err: errors.New("killing pod default/app: rpc error")}
	l, _ := withNodeShutdown(n, pods, time.Second)
	controls := make(chan Control)
	rec := &recorder{}
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlShutdown
	s := wait(t, out)
	if s.code != ExitOK || !errors.Is(s.err, pods.err) || !strings.Contains(s.err.Error(), "system shutdown") {
		t.Errorf("serve = %d, %v; want exit code 0 and the node shutdown's error", s.code, s.err)
	}
	if n.stops.Load() != 1 {
		t.Errorf("stop called %d times, want 1", n.stops.Load())
	}
}

// A node that ends on its own while its pods are being stopped is not
// stopped again.
func TestRunEndingDuringTheNodeShutdown(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	ended := make(chan struct{})
	stops := 0
	l := lifecycle{
		run:  func() error { <-ended; return errors.New("kubelet exited") },
		stop: func() { stops++ },
		nodeShutdown: func() *NodeShutdown {
			return &NodeShutdown{Run: func() error { close(ended); <-hang; return nil }, Grace: time.Minute}
		},
		nodeShutdownSlack: time.Second, stopTimeout: time.Second, progress: 10 * time.Millisecond,
	}
	controls := make(chan Control)
	rec := &recorder{}
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlPreShutdown
	s := wait(t, out)
	if s.code != ExitOK || s.err == nil || !strings.Contains(s.err.Error(), "kubelet exited") {
		t.Errorf("serve = %d, %v; want exit code 0 and run's error", s.code, s.err)
	}
	if stops != 0 {
		t.Error("stop called for a node that had already ended")
	}
}

// Before the kubelet has registered a node shutdown (or with graceful
// node shutdown off), a host shutdown is the plain stop.
func TestHostShutdownWithoutNodeShutdown(t *testing.T) {
	n := newNode()
	l := lifecycle{run: n.run, stop: n.stop, nodeShutdown: func() *NodeShutdown { return nil },
		stopTimeout: 5 * time.Second, progress: 10 * time.Millisecond}
	controls := make(chan Control)
	rec := &recorder{}
	out := start(l, controls, rec)
	rec.waitReports(t, 2)
	controls <- ControlPreShutdown
	if s := wait(t, out); s.code != ExitOK || s.err != nil || n.stops.Load() != 1 {
		t.Errorf("serve = %d, %v, %d stops; want a clean stop", s.code, s.err, n.stops.Load())
	}
}

func TestSetNodeShutdownRegistersTheLatest(t *testing.T) {
	t.Cleanup(func() { nodeShutdown.Store(nil) })
	if registeredNodeShutdown() != nil {
		t.Fatal("a node shutdown is registered before any was")
	}
	first := func() error { return errors.New("first") }
	second := func() error { return errors.New("second") }
	SetNodeShutdown(NodeShutdown{Run: first, Grace: time.Second})
	SetNodeShutdown(NodeShutdown{Run: second, Grace: 2 * time.Second})
	ns := registeredNodeShutdown()
	if ns == nil || ns.Grace != 2*time.Second || ns.Run().Error() != "second" {
		t.Errorf("registered %+v, want the second registration (a restarted kubelet's)", ns)
	}
}

// The service manager's requests and an administrator's pre-shutdown
// requests reach the lifecycle as the same controls.
func TestForwardMergesPreShutdownRequests(t *testing.T) {
	requests := make(chan uint32)
	preShutdown := make(chan struct{})
	controls := make(chan Control)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		forward(requests, func(r uint32) Control { return Control(r) }, preShutdown, controls, quit)
		close(done)
	}()
	next := func() Control {
		select {
		case c := <-controls:
			return c
		case <-time.After(5 * time.Second):
			t.Fatal("no control forwarded within 5s")
			return 0
		}
	}
	requests <- 4
	if c := next(); c != ControlInterrogate {
		t.Errorf("request 4 forwarded as %v, want Interrogate", c)
	}
	preShutdown <- struct{}{}
	if c := next(); c != ControlPreShutdown {
		t.Errorf("a pre-shutdown request forwarded as %v, want ControlPreShutdown", c)
	}
	// A request nobody takes does not keep forward from quitting.
	requests <- 1
	close(quit)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("forward did not return after quit")
	}
}

func TestPreShutdownEventName(t *testing.T) {
	if got := PreShutdownEventName(4242); got != `Global\preshutdown-4242` {
		t.Errorf("PreShutdownEventName(4242) = %q", got)
	}
}
