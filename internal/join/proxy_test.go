package join_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// noProxyOf is the NO_PROXY entries of a service's environment.
func noProxyOf(t *testing.T, env []string) []string {
	t.Helper()
	for _, line := range env {
		if v, ok := strings.CutPrefix(line, "NO_PROXY="); ok {
			return strings.Split(v, ",")
		}
	}
	t.Fatalf("no NO_PROXY in %q", env)
	return nil
}

// join --proxy gives the edgecore service and the containerd it installs
// the proxy, with NO_PROXY holding loopback, the node's addresses (the
// one the configuration gives the kubelet and the one the host reaches
// cloudcore from), the node's and the cluster's pod ranges, the service
// range and cloudcore before --no-proxy; no output shows the password.
func TestJoinProxyEnvironmentBypassesLoopbackTheNodeItsRangesAndTheCloud(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	o := hosttest.WithL2Bridge(w.Options())
	o.Proxy.URL = "http://edge:pr0xy-pass@proxy.example:3128"
	o.Proxy.NoProxy = []string{".corp.example"}
	o.Set = []string{"modules.edged.nodeIP=10.1.2.3"}
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	want := []string{"localhost", "127.0.0.1", "::1", "10.1.2.3", w.Host.NodeIP, "10.244.2.0/24", "10.244.0.0/16", "10.96.0.0/12", "192.168.50.10", ".corp.example"}
	for _, name := range []string{"edgecore", runtimeinstall.ServiceName} {
		env := w.Services.Configs[name].Environment
		if got := noProxyOf(t, env); !reflect.DeepEqual(got, want) {
			t.Errorf("the %s service's NO_PROXY is %q, want %q", name, got, want)
		}
		for _, v := range []string{"HTTP_PROXY=", "HTTPS_PROXY="} {
			if !contains(env, v+o.Proxy.URL) {
				t.Errorf("the %s service's environment %q lacks %s%s", name, env, v, o.Proxy.URL)
			}
		}
	}
	hosttest.MustContain(t, "join output", out.String(), "Proxy: http://***@proxy.example:3128 for the edgecore and containerd services; NO_PROXY "+strings.Join(want, ","))
	if strings.Contains(out.String(), "pr0xy-pass") {
		t.Errorf("join's output shows the proxy's password:\n%s", out.String())
	}
}

// With the host's own containerd only the edgecore service gets the
// proxy, and join says how to give the same to containerd.
func TestJoinProxyLeavesTheHostsContainerdAlone(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	w.CRIUp = true
	o := w.Options()
	o.Network.L2Bridge.ClusterCIDR, o.Network.L2Bridge.ServiceCIDR = "10.244.0.0/16", "10.96.0.0/12"
	o.Proxy.URL = "http://proxy.example:3128"
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	if env := w.Services.Configs["edgecore"].Environment; !contains(env, "HTTPS_PROXY=http://proxy.example:3128") ||
		!contains(noProxyOf(t, env), "10.244.0.0/16") || !contains(noProxyOf(t, env), "10.96.0.0/12") {
		t.Errorf("the edgecore service's environment: %q", env)
	}
	if env := w.Services.Configs["containerd"].Environment; len(env) != 0 {
		t.Errorf("join changed the host's containerd's environment: %q", env)
	}
	hosttest.MustContain(t, "join output", out.String(), "for the edgecore service only: the host's containerd keeps its own environment",
		`HKLM\SYSTEM\CurrentControlSet\Services\containerd /v Environment`)
}

// Without the cluster's pod and service ranges NO_PROXY could not keep
// pod and service traffic off the proxy: --proxy without them (the host's
// runtime needs neither otherwise) is refused in the first step, naming
// both flags, before anything changes.
func TestJoinProxyNeedsTheClusterRanges(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	before := w.FS.Paths()
	o := w.Options()
	o.Proxy.URL = "http://edge:pr0xy-pass@proxy.example:3128"
	o.Network.L2Bridge.ServiceCIDR = "services"
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(),
		"--cluster-cidr is not given: with --proxy, NO_PROXY holds the cluster's pod range", "give --cluster-cidr",
		`--service-cidr "services" is not a CIDR range`)
	if strings.Contains(err.Error(), "pr0xy-pass") {
		t.Errorf("the refusal shows the proxy's password: %v", err)
	}
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
		t.Errorf("the host changed: %v %v", after, w.Services.Calls)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
