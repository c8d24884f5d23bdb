package preflight

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// The row compares how long Windows waits for the service at a host
// shutdown with what the configuration's graceful node shutdown needs.
func TestHostShutdownRow(t *testing.T) {
	const field = "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"
	on := &config.NodeShutdown{Grace: 30 * time.Second, Field: field}
	running := func(timeout time.Duration) service.Status {
		return service.Status{Installed: true, State: service.Running, PreShutdownTimeout: timeout}
	}
	for _, tc := range []struct {
		name   string
		ns     *config.NodeShutdown
		svc    service.Status
		svcErr error
		status Status
		want   []string
	}{
		{"covered", on, running(70 * time.Second), nil, Pass,
			[]string{"stops the pods by priority within 30s (" + field + "), then edgecore stops; Windows waits up to 1m10s"}},
		{"installed before the grace period grew", on, running(35 * time.Second), nil, Fail,
			[]string{field + " asks for 30s", "waits only 35s for the edgecore service, which needs 1m10s",
				"fix: run `edgecore.exe service uninstall`, then `edgecore.exe service install`", "or lower " + field}},
		{"off", &config.NodeShutdown{}, running(35 * time.Second), nil, Pass, []string{"graceful node shutdown is off", "up to 35s"}},
		{"off, Windows' default wait", &config.NodeShutdown{}, running(10 * time.Second), nil, Fail, []string{"waits only 10s", "needs 35s"}},
		{"not installed", on, service.Status{}, nil, Skip, []string{"not installed yet", "up to 1m10s"}},
		{"unreadable time-out", on, service.Status{Installed: true}, nil, Warn, []string{"could not check", "pre-shutdown time-out"}},
		{"query failed", on, service.Status{}, errors.New("access is denied"), Warn, []string{"could not check: access is denied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := healthyHost()
			h.svc, h.svcErr = tc.svc, tc.svcErr
			cfg := healthyConfig()
			cfg.NodeShutdown = tc.ns
			rows := checkHostShutdown(cfg, h.probes())
			if len(rows) != 1 || rows[0].Status != tc.status {
				t.Fatalf("rows %+v, want one %s", rows, tc.status)
			}
			text := rows[0].Detail + "\nfix: " + rows[0].Fix
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("row %q lacks %q", text, w)
				}
			}
		})
	}
	if rows := checkHostShutdown(healthyConfig(), healthyHost().probes()); rows != nil {
		t.Errorf("a configuration of another OS got rows %+v", rows)
	}
}

func TestFromConfigReadsTheNodeShutdownOnWindowsOnly(t *testing.T) {
	c, err := config.Sample(config.KindDefault, windowsHost)
	if err != nil {
		t.Fatal(err)
	}
	if pc := FromConfig(c, windowsHost, ""); pc.NodeShutdown == nil || pc.NodeShutdown.Grace != 30*time.Second {
		t.Errorf("Windows: NodeShutdown %+v, want the default 30s", pc.NodeShutdown)
	}
	linux := config.Host{GOOS: "linux"}
	l, err := config.Sample(config.KindDefault, linux)
	if err != nil {
		t.Fatal(err)
	}
	if pc := FromConfig(l, linux, ""); pc.NodeShutdown != nil {
		t.Errorf("Linux: NodeShutdown %+v, want none", pc.NodeShutdown)
	}
}
