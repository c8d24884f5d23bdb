package service

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/eventlog"
)

// sink writes the lifecycle's events to a recording event log, as
// RunAsService writes them to the Application log.
func sink(r *eventlog.Recorder) func(eventlog.Kind, string) {
	return func(k eventlog.Kind, msg string) { _ = eventlog.Write(r, k, msg) }
}

func wantEvents(t *testing.T, r *eventlog.Recorder, want ...eventlog.Kind) []eventlog.Event {
	t.Helper()
	got := r.Written()
	var ids []uint32
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	var wantIDs []uint32
	for _, k := range want {
		wantIDs = append(wantIDs, k.ID())
	}
	if len(ids) != len(wantIDs) {
		t.Fatalf("events %v, want ids %v", got, wantIDs)
	}
	for i := range ids {
		if ids[i] != wantIDs[i] || got[i].Level != want[i].Level() {
			t.Fatalf("events %v, want ids %v", got, wantIDs)
		}
	}
	return got
}

func TestTheServiceWritesItsStartAndStopToTheEventLog(t *testing.T) {
	log := &eventlog.Recorder{}
	n := newNode()
	controls := make(chan Control)
	out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: time.Second, events: sink(log)}, controls, &recorder{})
	controls <- ControlStop
	if s := wait(t, out); s.err != nil {
		t.Fatal(s.err)
	}
	ev := wantEvents(t, log, eventlog.Start, eventlog.Stop)
	if !strings.Contains(ev[0].Msg, "started (process ") || !strings.Contains(ev[1].Msg, "stopped at the stop request") {
		t.Errorf("messages %v", ev)
	}
}

func TestAHostShutdownIsWrittenBeforeTheStop(t *testing.T) {
	log := &eventlog.Recorder{}
	n := newNode()
	controls := make(chan Control)
	out := start(lifecycle{run: n.run, stop: n.stop, stopTimeout: 5 * time.Second, progress: time.Second, events: sink(log)}, controls, &recorder{})
	controls <- ControlPreShutdown
	wait(t, out)
	ev := wantEvents(t, log, eventlog.Start, eventlog.PreShutdown, eventlog.Stop)
	if !strings.Contains(ev[1].Msg, "host is shutting down") {
		t.Errorf("pre-shutdown event %q", ev[1].Msg)
	}
}

// A run that fails (a refusal at start: a bad configuration, a squatted
// pipe) is an error event naming the cause and where to look.
func TestAFailedRunIsAnErrorEventWithItsCause(t *testing.T) {
	log := &eventlog.Recorder{}
	code, _ := lifecycle{run: func() error { return errors.New("modules.edged.podSandboxImage has no Windows variant") },
		stop: func() {}, stopTimeout: time.Second, progress: time.Second, events: sink(log)}.serve(make(chan Control), func(report) {})
	if code != ExitRunFailed {
		t.Fatalf("code %d", code)
	}
	ev := wantEvents(t, log, eventlog.Start, eventlog.Refused)
	if ev[1].Level != eventlog.Error || !strings.Contains(ev[1].Msg, "podSandboxImage has no Windows variant") || !strings.Contains(ev[1].Msg, "preflight") {
		t.Errorf("refusal event %+v", ev[1])
	}
}

func TestEventIDsAreDistinctAndWithinEventCreatesRange(t *testing.T) {
	seen := map[uint32]eventlog.Kind{}
	for _, k := range eventlog.Kinds() {
		if id := k.ID(); id < 1 || id > 1000 {
			t.Errorf("%s has id %d, outside EventCreate.exe's 1..1000", k, id)
		} else if other, dup := seen[id]; dup {
			t.Errorf("%s and %s share id %d", k, other, id)
		}
		seen[k.ID()] = k
	}
	if DefaultConfig(`C:\e.exe`, `C:\c.yaml`, 0).EventSource != eventlog.Source {
		t.Error("edgecore's service registers no event source")
	}
}
