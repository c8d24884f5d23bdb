package crashlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

func TestStackDumpNameIsNotARotatedLog(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890e6, time.Local)
	name := StackDumpName(4242, at)
	if name != "edgecore-stackdump-4242-2025-03-04T05-06-07.890.log" {
		t.Errorf("StackDumpName = %s", name)
	}
	// lumberjack removes edgecore-<time>.log files beyond --log-max-backups;
	// its time stamp must not parse out of a dump's name.
	rest := strings.TrimSuffix(strings.TrimPrefix(name, "edgecore-"), ".log")
	if _, err := time.Parse("2006-01-02T15-04-05.000", rest); err == nil {
		t.Errorf("%s looks like a rotated log file; rotation would delete it", name)
	}
	if !isStackDumpOf(name, 4242) || isStackDumpOf(name, 424) || isStackDumpOf(name+".tmp", 4242) {
		t.Errorf("isStackDumpOf does not recognise exactly the finished dumps of 4242")
	}
}

// parked is a goroutine the dump must show.
func parked(started *sync.WaitGroup, stop <-chan struct{}) {
	started.Done()
	<-stop
}

// park starts n parked goroutines and returns once all run; closing the
// returned channel ends them.
func park(t *testing.T, n int) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	var started sync.WaitGroup
	started.Add(n)
	for i := 0; i < n; i++ {
		go parked(&started, stop)
	}
	started.Wait()
}

func TestWriteStackDumpHoldsEveryGoroutine(t *testing.T) {
	park(t, 1)
	dir := filepath.Join(t.TempDir(), "new")
	path, err := WriteStackDump(dir, 77, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !isStackDumpOf(filepath.Base(path), 77) {
		t.Errorf("dump written to %s", path)
	}
	got := read(t, path)
	for _, want := range []string{"goroutine stacks of edgecore process 77", "crashlog.parked", "crashlog.TestWriteStackDumpHoldsEveryGoroutine"} {
		if !strings.Contains(got, want) {
			t.Errorf("the dump lacks %q", want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in %s, want only the dump (no .tmp left)", len(entries), dir)
	}
}

func TestAllStacksGrowsItsBuffer(t *testing.T) {
	// Enough goroutines that their stacks outgrow the first 1 MB buffer.
	park(t, 5000)
	stacks, cut := AllStacks()
	if cut || len(stacks) <= 1<<20 {
		t.Fatalf("stacks of %d bytes (cut %v), want more than 1 MB, whole", len(stacks), cut)
	}
	if n := strings.Count(string(stacks), "crashlog.parked"); n < 5000 {
		t.Errorf("%d parked goroutines in the dump, want 5000", n)
	}
}

// fakeEvent is a stack dump event signalled by the test.
type fakeEvent struct {
	signals chan struct{}
	failing error
	mu      sync.Mutex
	closed  chan struct{}
	closes  int
}

func newFakeEvent() *fakeEvent {
	return &fakeEvent{signals: make(chan struct{}), closed: make(chan struct{})}
}

func (e *fakeEvent) Wait() error {
	if e.failing != nil {
		return e.failing
	}
	select {
	case <-e.signals:
		return nil
	case <-e.closed:
		return stackdump.ErrClosed
	}
}

func (e *fakeEvent) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closes++
	if e.closes == 1 {
		close(e.closed)
	}
	return nil
}

type outcome struct {
	path string
	err  error
}

func TestServeStackDumpsDumpsOncePerSignalUntilTheContextEnds(t *testing.T) {
	ev := newFakeEvent()
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan outcome, 10)
	n := 0
	done := ServeStackDumps(ctx, ev, func() (string, error) {
		n++
		if n == 2 {
			return "", errors.New("disk full")
		}
		return "dump-" + string(rune('0'+n)), nil
	}, func(path string, err error) { reports <- outcome{path, err} })

	for i := 0; i < 3; i++ {
		ev.signals <- struct{}{}
		select {
		case r := <-reports:
			switch i {
			case 1:
				if r.err == nil || !strings.Contains(r.err.Error(), "disk full") {
					t.Errorf("signal %d reported %+v, want the dump's error", i+1, r)
				}
			default:
				if r.err != nil || r.path != "dump-"+string(rune('1'+i)) {
					t.Errorf("signal %d reported %+v", i+1, r)
				}
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no report for signal %d", i+1)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("serving did not end with the context")
	}
	if ev.closes != 1 {
		t.Errorf("event closed %d times, want once", ev.closes)
	}
	if len(reports) != 0 {
		t.Errorf("reports without a signal: %v", <-reports)
	}
}

func TestServeStackDumpsReportsAFailingWait(t *testing.T) {
	ev := newFakeEvent()
	ev.failing = errors.New("wait failed")
	reports := make(chan outcome, 10)
	done := ServeStackDumps(context.Background(), ev, func() (string, error) {
		t.Error("dumped without a signal")
		return "", nil
	}, func(path string, err error) { reports <- outcome{path, err} })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("serving did not end after Wait failed")
	}
	if r := <-reports; r.err == nil || !strings.Contains(r.err.Error(), "stack dumps on request have stopped: wait failed") {
		t.Errorf("reported %+v, want the failure", r)
	}
}

func TestWaitForStackDumpSeesOnlyANewDumpOfTheProcess(t *testing.T) {
	dir := t.TempDir()
	earlier := StackDumpName(9, time.Now().Add(-time.Hour))
	for _, name := range []string{earlier, StackDumpName(10, time.Now()), StackDumpName(9, time.Now()) + ".tmp", "edgecore.log"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before, err := StackDumps(dir, 9)
	if err != nil || len(before) != 1 || !before[earlier] {
		t.Fatalf("StackDumps = %v, %v; want only %s", before, err, earlier)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if p, err := WaitForStackDump(ctx, dir, 9, before, 10*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForStackDump with no new dump = %s, %v", p, err)
	}

	want := filepath.Join(dir, StackDumpName(9, time.Now()))
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = os.WriteFile(want, []byte("stacks"), 0o600)
	}()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := WaitForStackDump(ctx, dir, 9, before, 10*time.Millisecond)
	if err != nil || got != want {
		t.Errorf("WaitForStackDump = %s, %v; want %s", got, err, want)
	}
}
