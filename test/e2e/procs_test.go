//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one component of the test cluster, with its output kept in a
// log file that is printed when the test fails.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	// started is when the process was started: what a check of what it
	// did takes as its "after".
	started time.Time
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

// start runs a component; the test ends it by PID when it finishes.
func start(t *testing.T, dir, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fatal(t, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	// A group of its own, so that Wine's helpers end with the component.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		fatalf(t, "start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, started: started, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Logf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	sayAgainAtTheEnd(t)
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			p.dump(t)
		}
	})
	return p
}

// stop ends the component: SIGTERM first, then SIGKILL to its group.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// interrupt ends the component as Ctrl+C in its console does: SIGINT,
// which Wine turns into the console's CTRL_C_EVENT for a Windows program.
// It reports whether the component ended by itself within bound; if not,
// stop ends it.
func (p *proc) interrupt(bound time.Duration) bool {
	select {
	case <-p.done:
		return true
	default:
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		return true
	case <-time.After(bound):
		p.stop()
		return false
	}
}

// kill ends the component the way a crash does: SIGKILL to its group,
// with no chance to clean up.
func (p *proc) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// dump prints the end of the component's log into the test output.
func (p *proc) dump(t *testing.T) {
	data, _ := os.ReadFile(p.log)
	lines := strings.Split(string(data), "\n")
	if len(lines) > 150 {
		lines = lines[len(lines)-150:]
	}
	t.Logf("---- last lines of %s (%s) ----\n%s", p.name, p.log, strings.Join(lines, "\n"))
}

// logContains reports whether the component has logged s.
func (p *proc) logContains(s string) bool {
	data, _ := os.ReadFile(p.log)
	return bytes.Contains(data, []byte(s))
}

// klogStart is the header of klog's line that edgecore's run begins with.
var klogStart = regexp.MustCompile(`(?m)^I(\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ \S+\] "Starting edgecore"`)

// startedAt is when the edgecore process that logs to logFile now started:
// the time stamp of the last "Starting edgecore" line after offset (where
// the file ended before the event that started it), waiting for one. It
// is the "after" of every check of what that process did: a check from an
// earlier time is met by the process before it. klog writes local time,
// which Wine takes from this machine. A log that rotated meanwhile is read
// from its start.
func startedAt(t *testing.T, logFile string, offset int64) time.Time {
	t.Helper()
	var m [][]string
	eventually(t, 2*time.Minute, "edgecore's start in its log "+logFile, func() (bool, error) {
		data, err := os.ReadFile(logFile)
		if err != nil {
			return false, err
		}
		if int64(len(data)) < offset {
			offset = 0
		}
		m = klogStart.FindAllStringSubmatch(string(data[offset:]), -1)
		return m != nil, nil
	})
	now := time.Now()
	at, err := time.ParseInLocation("0102 15:04:05.000000", m[len(m)-1][1], time.Local)
	if err != nil {
		fatal(t, err)
	}
	at = at.AddDate(now.Year(), 0, 0)
	if at.After(now) { // logged in December, read in January
		at = at.AddDate(-1, 0, 0)
	}
	if now.Sub(at) > 15*time.Minute {
		fatalf(t, "edgecore's start in its log, %s, is not in the last minutes: does Wine's clock use another time zone than %s?", at, time.Local)
	}
	return at
}

// eventually polls cond until it holds or timeout passes, and returns how
// long it took.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) time.Duration {
	t.Helper()
	begin := time.Now()
	var last error
	for time.Since(begin) < timeout {
		ok, err := cond()
		if ok {
			return time.Since(begin)
		}
		last = err
		time.Sleep(250 * time.Millisecond)
	}
	fatalf(t, "%s: not within %v (last error: %v)", what, timeout, last)
	return 0
}

// CI shows the end of a run's output, and a failed test prints its
// components' logs after its failure: the reason scrolls out of sight.
// fatalf records it, and the test's last cleanup says it again after the
// logs.
var (
	reasonsMu sync.Mutex
	reasons   = map[string][]string{}
	summaries = map[string]bool{}
)

func fatalf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatal(record(t, fmt.Sprintf(format, args...)))
}

func fatal(t *testing.T, args ...any) {
	t.Helper()
	t.Fatal(record(t, strings.TrimSuffix(fmt.Sprintln(args...), "\n")))
}

func errorf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Error(record(t, fmt.Sprintf(format, args...)))
}

func errorl(t *testing.T, args ...any) {
	t.Helper()
	t.Error(record(t, strings.TrimSuffix(fmt.Sprintln(args...), "\n")))
}

func record(t *testing.T, msg string) string {
	reasonsMu.Lock()
	reasons[t.Name()] = append(reasons[t.Name()], msg)
	reasonsMu.Unlock()
	return msg
}

// sayAgainAtTheEnd registers, once per test and before any component's
// cleanup (cleanups run last-in first-out), the line that ends a failed
// test's output.
func sayAgainAtTheEnd(t *testing.T) {
	reasonsMu.Lock()
	defer reasonsMu.Unlock()
	if summaries[t.Name()] {
		return
	}
	summaries[t.Name()] = true
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		reasonsMu.Lock()
		said := reasons[t.Name()]
		reasonsMu.Unlock()
		if len(said) == 0 {
			t.Logf("==== %s failed: its first error is above the components' logs", t.Name())
			return
		}
		t.Logf("==== %s failed: %s", t.Name(), strings.Join(said, "; "))
	})
}

// freePort asks the kernel for an unused loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(t, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func mustEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		fatalf(t, "%s is not set: run the end-to-end tests with `make e2e`", name)
	}
	if strings.Contains(name, "BIN") || strings.HasSuffix(name, "_EXE") {
		if _, err := os.Stat(v); err != nil {
			fatalf(t, "%s: %v", name, err)
		}
	}
	return v
}

func waitTCP(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "port "+addr+" answers", func() (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err
		}
		c.Close()
		return true, nil
	})
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
