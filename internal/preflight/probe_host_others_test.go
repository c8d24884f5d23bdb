//go:build !windows

package preflight

import (
	"context"
	"runtime"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// Off Windows the host probes say why they cannot answer (hostprobe's
// tests), and the table must show that as a WARN rather than a PASS or a
// crash.
func TestHostProbesOffWindows(t *testing.T) {
	want := "not supported on " + runtime.GOOS + ": run preflight on the Windows host"
	p := SystemProbes(deps.ForHost(config.Host{GOOS: runtime.GOOS}, "", nil))
	p.CRI, p.ImagePlatforms, p.ImagePresent, p.Dial, p.DialQUIC = nil, nil, nil, nil, nil // no network in unit tests
	rows := Run(context.Background(), Config{RootDir: "/var/lib/kubelet"}, p)
	if rows[0] != warn(nameBuild, "could not check: "+want, "") {
		t.Errorf("first row %+v", rows[0])
	}
}
