//go:build !windows

package hostprobe

import (
	"context"
	"runtime"
	"testing"
)

// Off Windows the host probes must say why they cannot answer, so that
// preflight's rows name the reason.
func TestHostProbesOffWindows(t *testing.T) {
	want := "not supported on " + runtime.GOOS + ": run preflight on the Windows host"
	_, e1 := windowsVersion()
	_, e2 := containersFeature()
	_, e3 := elevated()
	_, e4 := freeDisk("/")
	_, e5 := diskSize("/")
	for i, err := range []error{e1, e2, e3, e4, e5} {
		if err == nil || err.Error() != want {
			t.Errorf("probe %d: %v, want %q", i, err, want)
		}
	}
	_, e6 := dialPipe(context.Background(), `\\.\pipe\containerd-containerd`)
	if e6 == nil || e6.Error() != "named pipes are not supported on "+runtime.GOOS+": use a tcp:// endpoint" {
		t.Errorf("dialPipe: %v", e6)
	}
}
