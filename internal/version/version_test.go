package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestModuleVersionFollowsReplace(t *testing.T) {
	bi := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "github.com/kubeedge/kubeedge", Version: "v1.20.0"},
		{Path: "k8s.io/kubernetes", Version: "v1.30.7", Replace: &debug.Module{Path: "github.com/kubeedge/kubernetes", Version: "v1.30.7-kubeedge1"}},
	}}
	if got := moduleVersion(bi, kubeedgeModule, "v1.20.0"); got != "v1.20.0" {
		t.Errorf("kubeedge version %q", got)
	}
	if got := moduleVersion(bi, kubernetesModule, "v1.30.7-kubeedge1"); got != "v1.30.7-kubeedge1" {
		t.Errorf("kubernetes version %q, want the fork's", got)
	}
	patched := &debug.BuildInfo{Deps: []*debug.Module{{Path: "github.com/kubeedge/kubeedge", Version: "v1.20.0",
		Replace: &debug.Module{Path: "./_output/upstream/kubeedge", Version: "(devel)"}}}}
	if got := moduleVersion(patched, kubeedgeModule, "v1.20.0"); got != "v1.20.0 (patched)" {
		t.Errorf("kubeedge built from a patched copy reports %q", got)
	}
	// The patched fork: the stamped version, not the one it replaces.
	fork := &debug.BuildInfo{Deps: []*debug.Module{{Path: "k8s.io/kubernetes", Version: "v1.30.7",
		Replace: &debug.Module{Path: "./_output/upstream/kubernetes", Version: "(devel)"}}}}
	if got := moduleVersion(fork, kubernetesModule, "v1.30.7-kubeedge1"); got != "v1.30.7-kubeedge1 (patched)" {
		t.Errorf("the patched fork reports %q", got)
	}
	if got := moduleVersion(fork, kubernetesModule, "v0.0.0-master+$Format:%H$"); got != "v1.30.7 (patched)" {
		t.Errorf("an unstamped build of the patched fork reports %q", got)
	}
	if got := moduleVersion(bi, "example.com/absent", "v1"); got != "unknown" {
		t.Errorf("absent module gave %q", got)
	}
}

func TestStringNamesEveryVersion(t *testing.T) {
	s := Info{Version: "v9.9.9", GitCommit: "abc123", BuildDate: "2026-01-01", KubeEdge: "v1.20.0",
		Kubernetes: "v1.30.7-kubeedge1", GoVersion: "go1.x", Platform: "windows/amd64"}.String()
	for _, want := range []string{"v9.9.9", "abc123", "v1.20.0", "v1.30.7-kubeedge1", "windows/amd64"} {
		if !strings.Contains(s, want) {
			t.Errorf("version output lacks %q:\n%s", want, s)
		}
	}
}
