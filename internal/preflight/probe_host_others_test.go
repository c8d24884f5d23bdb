//go:build !windows

package preflight

import (
	"context"
	"runtime"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
)

// Off Windows the host probes must say why they cannot answer, and the
// table must show that as a WARN rather than a PASS or a crash.
func TestHostProbesOffWindows(t *testing.T) {
	want := "not supported on " + runtime.GOOS + ": run preflight on the Windows host"
	_, e1 := windowsVersion()
	_, e2 := containersFeature()
	_, e3 := elevated()
	_, e4 := freeDisk("/")
	for i, err := range []error{e1, e2, e3, e4} {
		if err == nil || err.Error() != want {
			t.Errorf("probe %d: %v, want %q", i, err, want)
		}
	}
	p := SystemProbes(config.Host{GOOS: runtime.GOOS})
	p.CRI, p.ImagePlatforms, p.Dial, p.DialQUIC = nil, nil, nil, nil // no network in unit tests
	rows := Run(context.Background(), Config{RootDir: "/var/lib/kubelet"}, p)
	if rows[0] != warn(nameBuild, "could not check: "+want, "") {
		t.Errorf("first row %+v", rows[0])
	}
	_, e6 := dialPipe(context.Background(), `\\.\pipe\containerd-containerd`)
	if e6 == nil || e6.Error() != "named pipes are not supported on "+runtime.GOOS+": use a tcp:// endpoint" {
		t.Errorf("dialPipe: %v", e6)
	}
}
