// Package version says which build of edgecore this is: this project's own
// version and commit, and the upstream KubeEdge and Kubernetes versions it was
// built from.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	componentversion "k8s.io/component-base/version"

	kubeedgeversion "github.com/kubeedge/kubeedge/pkg/version"
)

// Set at build time with -ldflags "-X ...". The defaults mark a build that did
// not go through the Makefile.
var (
	version   = "v0.0.0-dev"
	gitCommit = "unknown"
	buildDate = "unknown"
)

const (
	kubeedgeModule   = "github.com/kubeedge/kubeedge"
	kubernetesModule = "k8s.io/kubernetes"
)

// Info is everything the version output shows.
type Info struct {
	Version    string
	GitCommit  string
	BuildDate  string
	KubeEdge   string
	Kubernetes string
	GoVersion  string
	Platform   string
}

// Get returns the version information of the running binary. The upstream
// versions come from the module graph the binary was built with, so they
// cannot disagree with what was really compiled in.
func Get() Info {
	info := Info{
		Version:    version,
		GitCommit:  gitCommit,
		BuildDate:  buildDate,
		KubeEdge:   "unknown",
		Kubernetes: "unknown",
		GoVersion:  runtime.Version(),
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.KubeEdge = moduleVersion(bi, kubeedgeModule, kubeedgeversion.Get().GitVersion)
		info.Kubernetes = moduleVersion(bi, kubernetesModule, componentversion.Get().GitVersion)
	}
	return info
}

// moduleVersion reports the version of the module at path. A module
// replaced by a local directory is an upstream release with this project's
// patches/ applied; the build records no version for it, so the one stamped
// into upstream's own version variable at build time is reported, marked
// as patched. Kubernetes is built from KubeEdge's fork, whose version is
// the replacement's.
func moduleVersion(bi *debug.BuildInfo, path, stamped string) string {
	for _, dep := range bi.Deps {
		if dep.Path != path {
			continue
		}
		switch {
		case dep.Replace == nil:
			return dep.Version
		case dep.Replace.Version == "" || dep.Replace.Version == "(devel)":
			if stamped == "" || strings.HasPrefix(stamped, "v0.0.0") {
				stamped = dep.Version
			}
			return stamped + " (patched)"
		}
		return dep.Replace.Version
	}
	return "unknown"
}

// String renders the version output, one fact a line.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "edgecore for Windows %s\n", i.Version)
	fmt.Fprintf(&b, "  KubeEdge:   %s\n", i.KubeEdge)
	fmt.Fprintf(&b, "  Kubernetes: %s\n", i.Kubernetes)
	fmt.Fprintf(&b, "  Git commit: %s\n", i.GitCommit)
	fmt.Fprintf(&b, "  Built:      %s\n", i.BuildDate)
	fmt.Fprintf(&b, "  Go:         %s %s\n", i.GoVersion, i.Platform)
	return b.String()
}
