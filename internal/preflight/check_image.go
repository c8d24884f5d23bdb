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
	image := cfg.SandboxImage
	// An image containerd holds (imported from an archive, or pulled
	// before) needs no registry: containerd matched its platform then.
	present, known := sandboxPresent(ctx, cfg, p)
	if present {
		return pass(nameSandbox, image+" is in containerd's k8s.io namespace")
	}
	missing := known && !present
	if p.ImagePlatforms == nil {
		if missing {
			return fail(nameSandbox, image+" is not in containerd and no registry was asked (--offline): no pod can start", fixMissingSandbox(image, cfg.ImagesDir))
		}
		return notProbed(nameSandbox)
	}
	useKnown := "set modules.edged.podSandboxImage to " + RecommendedSandboxImage + " (or a copy of it in your registry)"
	ctx, cancel := context.WithTimeout(ctx, 3*cfg.Timeout)
	defer cancel()
	platforms, err := p.ImagePlatforms(ctx, image)
	if err != nil && missing {
		return fail(nameSandbox, image+" is not in containerd and its registry does not answer ("+oneLine(err.Error())+"): no pod can start", fixMissingSandbox(image, cfg.ImagesDir))
	}
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

// sandboxPresent asks containerd whether it holds the sandbox image;
// known is false when it could not be asked.
func sandboxPresent(ctx context.Context, cfg Config, p Probes) (present, known bool) {
	if p.ImagePresent == nil || strings.TrimSpace(cfg.CRIEndpoint) == "" {
		return false, false
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	ok, err := p.ImagePresent(ctx, cfg.CRIEndpoint, cfg.SandboxImage)
	return ok, err == nil
}

// fixMissingSandbox is how an offline host gets the sandbox image.
func fixMissingSandbox(image, imagesDir string) string {
	return "on a host with a registry, save it (docker save " + image + " -o pause.tar, or ctr images export), copy the archive into the images folder beside edgecore.exe or into " +
		imagesDir + " and run edgecore.exe images import <archive> (the node also imports it at its next start); or make the registry reachable"
}
