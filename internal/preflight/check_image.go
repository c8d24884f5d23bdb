package preflight

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/distribution/reference"
)

const nameSandbox = "Sandbox image"

// RecommendedSandboxImage is the pause image of the Kubernetes release edged
// is built from; it carries Windows variants for ltsc2019 and ltsc2022.
const RecommendedSandboxImage = "registry.k8s.io/pause:3.9"

// knownWindowsPause are repositories whose pause images from 3.9 on carry
// Windows variants. They let the check say something useful when the
// registry cannot be reached, as on an offline site.
var knownWindowsPause = map[string]bool{
	"registry.k8s.io/pause":                  true,
	"mcr.microsoft.com/oss/kubernetes/pause": true,
}

func checkSandboxImage(ctx context.Context, cfg Config, p Probes) Row {
	if p.ImagePlatforms == nil {
		return notProbed(nameSandbox)
	}
	image := cfg.SandboxImage
	useKnown := "set modules.edged.podSandboxImage to " + RecommendedSandboxImage + " (or a copy of it in your registry)"
	ctx, cancel := context.WithTimeout(ctx, 3*cfg.Timeout)
	defer cancel()
	platforms, err := p.ImagePlatforms(ctx, image)
	if err != nil {
		if knownGoodPause(image) {
			return warn(nameSandbox, image+": could not read its platforms ("+oneLine(err.Error())+"); this image is known to have Windows variants", "")
		}
		return warn(nameSandbox, image+": could not read its platforms: "+oneLine(err.Error()),
			"make sure it has a windows/amd64 variant, or "+useKnown)
	}
	var windows []Platform
	for _, pl := range platforms {
		if strings.EqualFold(pl.OS, "windows") {
			windows = append(windows, pl)
		}
	}
	if len(windows) == 0 {
		return fail(nameSandbox, fmt.Sprintf("%s has no Windows variant (it offers %s), so no pod can start", image, list(platforms)), useKnown)
	}
	build := hostBuild(p)
	if build == 0 {
		return pass(nameSandbox, fmt.Sprintf("%s has %s", image, list(windows)))
	}
	for _, pl := range windows {
		if pl.OSVersion == "" || strings.HasPrefix(pl.OSVersion, fmt.Sprintf("10.0.%d.", build)) || pl.OSVersion == fmt.Sprintf("10.0.%d", build) {
			return pass(nameSandbox, fmt.Sprintf("%s has %s for this host's build %d", image, pl, build))
		}
	}
	return fail(nameSandbox, fmt.Sprintf("%s has no variant for this host's build %d (it offers %s); process isolation cannot run it", image, build, list(windows)),
		useKnown)
}

// hostBuild is 0 when the build is unknown.
func hostBuild(p Probes) int {
	if p.WindowsVersion == nil {
		return 0
	}
	v, err := p.WindowsVersion()
	if err != nil {
		return 0
	}
	return v.Build
}

func knownGoodPause(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil || !knownWindowsPause[named.Name()] {
		return false
	}
	tagged, ok := named.(reference.Tagged)
	if !ok {
		return false // a digest could be anything
	}
	major, minor, ok := majorMinor(tagged.Tag())
	return ok && (major > 3 || major == 3 && minor >= 9)
}

// majorMinor reads "3.10" and "3.9-windows-ltsc2022" alike.
func majorMinor(tag string) (int, int, bool) {
	head, _, _ := strings.Cut(tag, "-")
	parts := strings.Split(head, ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

func list(ps []Platform) string {
	if len(ps) == 0 {
		return "no platforms"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
