//go:build !windows

package core

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The child process of TestGracefulShutdownStopsOnUpstreamSignals: it runs
// GracefulShutdown and exits 0 once that returns.
func TestMain(m *testing.M) {
	if os.Getenv("BEEHIVE_SIGNAL_CHILD") == "1" {
		// Our own handler keeps a signal that arrives before
		// GracefulShutdown has installed its handler from killing the
		// process; the parent signals only once it is in place, and
		// repeats the signal until the child exits.
		signal.Notify(make(chan os.Signal, 1), shutdownSignals...)
		fmt.Println("ready")
		StartModules()
		GracefulShutdown()
		fmt.Println("shut down")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cloudcore runs on this bus and must stop cleanly on every signal that
// stops upstream's.
func TestGracefulShutdownStopsOnUpstreamSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM,
		syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "BEEHIVE_SIGNAL_CHILD=1")
			out := &lockedBuffer{}
			cmd.Stderr = out
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewReader(stdout)
			if line, err := lines.ReadString('\n'); err != nil || line != "ready\n" {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("child did not get ready: %q %v\n%s", line, err, out.String())
			}
			done := make(chan error, 1)
			go func() {
				_, _ = io.Copy(out, lines)
				done <- cmd.Wait()
			}()
			deadline := time.After(10 * time.Second)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("child exited with %v:\n%s", err, out.String())
					}
					return
				case <-tick.C:
					_ = cmd.Process.Signal(sig)
				case <-deadline:
					_ = cmd.Process.Kill()
					t.Fatalf("GracefulShutdown did not return on %v:\n%s", sig, out.String())
				}
			}
		})
	}
}

// lockedBuffer collects a child's output written from exec's copying
// goroutines while the test may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
