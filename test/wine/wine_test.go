//go:build wine

// Package wine runs the Windows edgecore.exe under Wine and checks what an
// operator sees on the console. Run it through `make wine-test`, which builds
// the binary and prepares the Wine prefix; it fails, never skips, when either
// is missing.
package wine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// winePath finds the Wine loader; Debian's wine64 package keeps it under
// /usr/lib/wine.
func winePath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"wine64", "wine"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/lib/wine/wine64"); err == nil {
		return "/usr/lib/wine/wine64"
	}
	t.Fatal("Wine is not installed: apt-get install wine64 (or run `make wine-test`)")
	return ""
}

func edgecoreExe(t *testing.T) string {
	t.Helper()
	exe := os.Getenv("EDGECORE_EXE")
	if exe == "" {
		t.Fatal("EDGECORE_EXE is not set: run these tests with `make wine-test`")
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("EDGECORE_EXE: %v", err)
	}
	if os.Getenv("WINEPREFIX") == "" {
		t.Fatal("WINEPREFIX is not set: run these tests with `make wine-test`")
	}
	return exe
}

// upstreamVersions are the KubeEdge and Kubernetes releases edgecore.exe
// was built from: the Makefile reads them off go.mod, so a move to a new
// upstream needs no edit here.
func upstreamVersions(t *testing.T) (kubeedge, kubernetes string) {
	t.Helper()
	kubeedge, kubernetes = os.Getenv("KUBEEDGE_VERSION"), os.Getenv("KUBERNETES_VERSION")
	if kubeedge == "" || kubernetes == "" {
		t.Fatal("KUBEEDGE_VERSION or KUBERNETES_VERSION is not set: run these tests with `make wine-test`")
	}
	return kubeedge, kubernetes
}

type result struct {
	stdout, stderr string
	code           int
}

// run starts edgecore.exe under Wine with args and waits at most timeout.
func run(t *testing.T, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, winePath(t), append([]string{edgecoreExe(t)}, args...)...)
	cmd.Env = append(os.Environ(), "WINEDEBUG=-all")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("edgecore.exe %v did not finish within %v\nstdout:\n%s\nstderr:\n%s", args, timeout, &stdout, &stderr)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("edgecore.exe %v: %v", args, err)
	}
	return result{stdout: normalise(stdout.String()), stderr: normalise(stderr.String()), code: code}
}

// normalise turns the console's CRLF line ends into LF.
func normalise(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// toWindowsPath names a file of the Linux host as Wine's Z: drive shows it.
func toWindowsPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	if rel, err := filepath.Rel(filepath.Join(os.Getenv("WINEPREFIX"), "drive_c"), abs); err == nil && !strings.HasPrefix(rel, "..") {
		return `C:\` + strings.ReplaceAll(rel, "/", `\`)
	}
	return "Z:" + strings.ReplaceAll(abs, "/", `\`)
}

// driveCTempDir is a temporary directory on the prefix's drive C, removed
// after the test, for a configuration with a join token: edgecore refuses
// to keep the token below a folder others may rename, and under Wine the
// test's own temporary folder is one (Z:\tmp, mode 1777). toWindowsPath
// names what is in it as C:\….
func driveCTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Join(os.Getenv("WINEPREFIX"), "drive_c"), "test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// runUntil starts edgecore.exe under Wine and reads its output until it
// holds want or timeout passes, then ends the process and returns the
// output. Killing the Wine loader ends the Windows process, which is what
// an operator's Ctrl+C cannot be made to do from here.
func runUntil(t *testing.T, timeout time.Duration, want string, args ...string) (string, bool) {
	t.Helper()
	n, stop := launch(t, args...)
	found := n.waitFor(want, timeout)
	stop()
	return n.Log(), found
}

// node is an edgecore.exe running under Wine, with its output so far.
type node struct {
	mu   sync.Mutex
	log  strings.Builder
	seen chan struct{} // closed when the output ends
}

// startNode runs edgecore.exe with args until its output holds want or
// timeout passes; the process is killed when the test ends. found is false
// when want never came (the process may have ended).
func startNode(t *testing.T, timeout time.Duration, want string, args ...string) (n *node, found bool) {
	t.Helper()
	n, stop := launch(t, args...)
	t.Cleanup(stop)
	return n, n.waitFor(want, timeout)
}

// launch starts edgecore.exe with args under Wine, collecting its output;
// stop kills it and waits until its output has ended.
func launch(t *testing.T, args ...string) (n *node, stop func()) {
	t.Helper()
	cmd := exec.Command(winePath(t), append([]string{edgecoreExe(t)}, args...)...)
	cmd.Env = append(os.Environ(), "WINEDEBUG=-all")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); pw.Close(); close(exited) }()
	n = &node{seen: make(chan struct{})}
	go func() {
		defer close(n.seen)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			n.mu.Lock()
			n.log.WriteString(sc.Text() + "\n")
			n.mu.Unlock()
		}
	}()
	var once sync.Once
	return n, func() { once.Do(func() { cmd.Process.Kill(); <-exited; <-n.seen }) }
}

// Log is what the node printed so far.
func (n *node) Log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.log.String()
}

// waitFor waits until the node's output holds text, at most within.
func (n *node) waitFor(text string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for !strings.Contains(n.Log(), text) {
		select {
		case <-n.seen:
			return strings.Contains(n.Log(), text)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// runWindowsProgram runs a Windows program of the tests under Wine.
func runWindowsProgram(t *testing.T, timeout time.Duration, exe string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, winePath(t), append([]string{exe}, args...)...)
	cmd.Env = append(os.Environ(), "WINEDEBUG=-all")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: normalise(stdout.String()), stderr: normalise(stderr.String())}
	if exit, ok := err.(*exec.ExitError); ok {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", exe, args, err)
	}
	return r
}
