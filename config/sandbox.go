package config

import (
	"strconv"
	"strings"

	"github.com/distribution/reference"
)

// WindowsRelease is a Windows Server release the node supports: its build
// and the tag Microsoft's base images (and so process-isolated pods) carry
// for it.
type WindowsRelease struct {
	Build int
	Name  string
	// Tag is the base images' tag for the build, e.g. ltsc2022.
	Tag string
}

// WindowsReleases are the builds the README supports, oldest first.
// Process-isolated containers run only images built for the host's own
// build, the sandbox (pause) image included.
var WindowsReleases = []WindowsRelease{
	{Build: 17763, Name: "Windows Server 2019", Tag: "ltsc2019"},
	{Build: 20348, Name: "Windows Server 2022", Tag: "ltsc2022"},
	{Build: 26100, Name: "Windows Server 2025", Tag: "ltsc2025"},
}

// WindowsReleaseOf is the supported release of build, false for any other.
func WindowsReleaseOf(build int) (WindowsRelease, bool) {
	for _, r := range WindowsReleases {
		if r.Build == build {
			return r, true
		}
	}
	return WindowsRelease{}, false
}

// pauseRepository is the Kubernetes pause image's repository, whose
// releases' Windows variants pauseWindowsBuilds lists.
const pauseRepository = "registry.k8s.io/pause"

// pauseWindowsBuilds are the Windows builds the manifest list of each
// registry.k8s.io/pause release carries, as Kubernetes' build/pause
// publishes them: 3.6 added ltsc2022 next to 1809 (ltsc2019), 3.7 dropped
// the semi-annual builds, 3.10.1 changed only the Windows base image, and
// 3.10.2 added ltsc2025 (docs/runtime.md names the sources). preflight
// judges an image against it when no registry answers.
var pauseWindowsBuilds = map[string][]int{
	"3.6":    {17763, 20348},
	"3.7":    {17763, 20348},
	"3.8":    {17763, 20348},
	"3.9":    {17763, 20348},
	"3.10":   {17763, 20348},
	"3.10.1": {17763, 20348},
	"3.10.2": {17763, 20348, 26100},
}

// SandboxBuilds are the Windows builds a sandbox image is known to carry
// variants for; known is false for an image pauseWindowsBuilds does not
// list (another repository, a digest, an unknown tag).
func SandboxBuilds(image string) (builds []int, known bool) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil || named.Name() != pauseRepository {
		return nil, false
	}
	if _, digested := named.(reference.Digested); digested {
		return nil, false
	}
	tag := "latest"
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	builds, known = pauseWindowsBuilds[tag]
	return builds, known
}

// SandboxImageFor is the pause image to use on build: WindowsSandboxImage
// when it has a variant for it, otherwise the newest listed release that
// has one; false when none does.
func SandboxImageFor(build int) (string, bool) {
	if b, _ := SandboxBuilds(WindowsSandboxImage); containsBuild(b, build) {
		return WindowsSandboxImage, true
	}
	best := ""
	for tag, builds := range pauseWindowsBuilds {
		if containsBuild(builds, build) && (best == "" || tagLess(best, tag)) {
			best = tag
		}
	}
	if best == "" {
		return "", false
	}
	return pauseRepository + ":" + best, true
}

func containsBuild(builds []int, build int) bool {
	for _, b := range builds {
		if b == build {
			return true
		}
	}
	return false
}

// tagLess orders pause tags (3.9 < 3.10 < 3.10.1) as versions.
func tagLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
