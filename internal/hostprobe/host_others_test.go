//go:build !windows

package hostprobe

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Off Windows the host probes must say why they cannot answer, so that
// preflight's rows name the reason; free space and size are statfs's.
func TestHostProbesOffWindows(t *testing.T) {
	want := "not supported on " + runtime.GOOS + ": run preflight on the Windows host"
	_, e1 := windowsVersion()
	_, e2 := containersFeature()
	_, e3 := elevated()
	for i, err := range []error{e1, e2, e3} {
		if err == nil || err.Error() != want {
			t.Errorf("probe %d: %v, want %q", i, err, want)
		}
	}
	_, e6 := dialPipe(context.Background(), `\\.\pipe\containerd-containerd`)
	if e6 == nil || e6.Error() != "named pipes are not supported on "+runtime.GOOS+": use a tcp:// endpoint" {
		t.Errorf("dialPipe: %v", e6)
	}
}

// The volume's free space and size are statfs's: free at most the size,
// and a file written takes its size off the free space.
func TestDiskSpaceIsStatfs(t *testing.T) {
	dir := t.TempDir()
	free, err := freeDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	total, err := diskSize(dir)
	if err != nil || total == 0 || free > total {
		t.Fatalf("size %d (%v), free %d", total, err, free)
	}
	if _, err := freeDisk(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("free space of a missing folder: %v", err)
	}
}
