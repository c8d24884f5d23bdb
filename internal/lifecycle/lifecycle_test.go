package lifecycle

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeSignals records what a context subscribed to and delivers signals
// the way os/signal does: only to channels subscribed to that signal.
type fakeSignals struct {
	mu   sync.Mutex
	subs map[chan<- os.Signal][]os.Signal
}

func newFakeSignals() *fakeSignals { return &fakeSignals{subs: map[chan<- os.Signal][]os.Signal{}} }

func (f *fakeSignals) Notify(c chan<- os.Signal, sig ...os.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs[c] = append(f.subs[c], sig...)
}

func (f *fakeSignals) Stop(c chan<- os.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, c)
}

// deliver sends s to every subscriber of s, without blocking, and reports
// how many there were.
func (f *fakeSignals) deliver(s os.Signal) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for c, sigs := range f.subs {
		for _, want := range sigs {
			if want == s {
				select {
				case c <- s:
				default:
				}
				n++
			}
		}
	}
	return n
}

func (f *fakeSignals) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

func ended(ctx context.Context, within time.Duration) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(within):
		return false
	}
}

func TestConsoleStopsOnCtrlC(t *testing.T) {
	for _, goos := range []string{"windows", "linux"} {
		t.Run(goos, func(t *testing.T) {
			src := newFakeSignals()
			ctx, stop := ConsoleContext(context.Background(), goos, src)
			defer stop()
			if ended(ctx, 20*time.Millisecond) {
				t.Fatal("the console context ended before any signal")
			}
			if n := src.deliver(os.Interrupt); n != 1 {
				t.Fatalf("Ctrl+C reached %d subscribers, want 1", n)
			}
			if !ended(ctx, 5*time.Second) {
				t.Fatal("Ctrl+C did not end the console context")
			}
			if !errors.Is(context.Cause(ctx), ErrStopRequested) {
				t.Fatalf("cause %v, want a stop request", context.Cause(ctx))
			}
		})
	}
}

// On Windows Go reports a user's log-off (CTRL_LOGOFF_EVENT) and a system
// shutdown as SIGTERM: a console command there must not take them as a
// stop request. On Linux SIGTERM is how a supervisor stops the process.
func TestConsoleSIGTERM(t *testing.T) {
	for goos, wantStop := range map[string]bool{"windows": false, "linux": true} {
		t.Run(goos, func(t *testing.T) {
			src := newFakeSignals()
			ctx, stop := ConsoleContext(context.Background(), goos, src)
			defer stop()
			src.deliver(syscall.SIGTERM)
			if got := ended(ctx, 200*time.Millisecond); got != wantStop {
				t.Fatalf("SIGTERM ended the context: %v, want %v", got, wantStop)
			}
		})
	}
}

func TestConsoleStopReleasesSignals(t *testing.T) {
	src := newFakeSignals()
	ctx, stop := ConsoleContext(context.Background(), "windows", src)
	stop()
	if src.subscribers() != 0 {
		t.Fatal("the signal subscription outlived the command")
	}
	if !ended(ctx, time.Second) {
		t.Fatal("stop did not end the context")
	}
}

// A service stops only when the service manager says so. Every signal the
// process could get, SIGTERM from a log-off included, leaves it running;
// the same signals stop the node in a console.
func TestNodeContextAsServiceIgnoresSignals(t *testing.T) {
	src := newFakeSignals()
	ctx, stop, release := NodeContext(context.Background(), true, "windows", src)
	defer release()
	for _, s := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		src.deliver(s)
	}
	if ended(ctx, 200*time.Millisecond) {
		t.Fatal("a signal ended the service's context; only the service manager may")
	}
	if src.subscribers() != 0 {
		t.Fatalf("the service subscribed to %d signal channels", src.subscribers())
	}
	stop("the service manager asked the service to stop")
	if !ended(ctx, time.Second) {
		t.Fatal("the service manager's stop did not end the context")
	}
	if !errors.Is(context.Cause(ctx), ErrStopRequested) {
		t.Fatalf("cause %v, want a stop request", context.Cause(ctx))
	}
}

func TestNodeContextInConsole(t *testing.T) {
	src := newFakeSignals()
	ctx, _, release := NodeContext(context.Background(), false, "windows", src)
	defer release()
	src.deliver(syscall.SIGTERM) // a log-off: ignored on Windows
	if ended(ctx, 200*time.Millisecond) {
		t.Fatal("SIGTERM ended the console node on Windows")
	}
	src.deliver(os.Interrupt)
	if !ended(ctx, 5*time.Second) {
		t.Fatal("Ctrl+C did not end the console node")
	}
}
