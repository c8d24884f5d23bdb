package logfile

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// safeBuffer is a log file stand-in that the test can read while klog
// writes.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// captureStderr runs f with os.Stderr redirected and returns what was
// written there. klog writes to os.Stderr as it is at the time of writing.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() {
		os.Stderr = saved
	}()
	f()
	klog.Flush()
	os.Stderr = saved
	w.Close()
	return <-done
}

// restoreKlog puts klog back on stderr for the other tests.
func restoreKlog(t *testing.T) {
	t.Cleanup(func() {
		if err := SetupKlog(Console, nil); err != nil {
			t.Error(err)
		}
	})
}

func TestKlogToFileOnly(t *testing.T) {
	restoreKlog(t)
	file := &safeBuffer{}
	stderr := captureStderr(t, func() {
		if err := SetupKlog(File, file); err != nil {
			t.Fatal(err)
		}
		klog.Info("info line for the file")
		klog.Error("error line for the file")
	})
	got := file.String()
	for _, line := range []string{"info line for the file", "error line for the file"} {
		if n := strings.Count(got, line); n != 1 {
			t.Errorf("%q is %d times in the file, want once:\n%s", line, n, got)
		}
	}
	if strings.Contains(stderr, "for the file") {
		t.Errorf("file-only logging wrote to stderr:\n%s", stderr)
	}
}

func TestKlogToConsoleAndFile(t *testing.T) {
	restoreKlog(t)
	file := &safeBuffer{}
	stderr := captureStderr(t, func() {
		if err := SetupKlog(Both, file); err != nil {
			t.Fatal(err)
		}
		klog.Info("info line for both")
		klog.Warning("warning line for both")
	})
	for _, line := range []string{"info line for both", "warning line for both"} {
		if n := strings.Count(file.String(), line); n != 1 {
			t.Errorf("%q is %d times in the file, want once", line, n)
		}
		if n := strings.Count(stderr, line); n != 1 {
			t.Errorf("%q is %d times on stderr, want once", line, n)
		}
	}
}

func TestKlogToConsole(t *testing.T) {
	restoreKlog(t)
	file := &safeBuffer{}
	// A file set up before must no longer receive lines.
	if err := SetupKlog(File, file); err != nil {
		t.Fatal(err)
	}
	stderr := captureStderr(t, func() {
		if err := SetupKlog(Console, nil); err != nil {
			t.Fatal(err)
		}
		klog.Info("info line for the console")
	})
	if !strings.Contains(stderr, "info line for the console") {
		t.Errorf("console logging did not reach stderr: %q", stderr)
	}
	if strings.Contains(file.String(), "for the console") {
		t.Error("console logging still wrote to the file")
	}
}

func TestSetupKlogRefusesBadInput(t *testing.T) {
	restoreKlog(t)
	if err := SetupKlog(File, nil); err == nil || !strings.Contains(err.Error(), "needs a log file writer") {
		t.Errorf("SetupKlog(File, nil) = %v", err)
	}
	if err := SetupKlog(Destination(0), nil); err == nil || !strings.Contains(err.Error(), "unknown log destination") {
		t.Errorf("SetupKlog(0) = %v", err)
	}
}
