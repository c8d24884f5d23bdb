package preflight

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/distribution/reference"

	"github.com/kubeedge-windows/edgecore/config"
)

const nameSandbox = "Sandbox image"

// knownWindowsPause are repositories whose pause images from 3.9 on carry
// Windows variants. They let the check say something useful when the
// registry cannot be reached, as on an offline site.
var knownWindowsPause = map[string]bool{
	"registry.k8s.io/pause":                  true,
	"mcr.microsoft.com/oss/kubernetes/pause": true,
}

func checkSandboxImage(ctx context.Context, cfg Config, p Probes) Row {
	image := cfg.SandboxImage
	build := hostBuild(p)
	useKnown := "set modules.edged.podSandboxImage to " + sandboxFor(build) + " (or a copy of it in your registry)"
	// A pause release whose variants are known needs no registry to be
	// judged: one without this host's build cannot start a pod here.
	if builds, known := config.SandboxBuilds(image); known && build != 0 && !containsInt(builds, build) {
		return fail(nameSandbox, fmt.Sprintf("%s has no variant for this host's build %d%s (its Windows variants are for builds %s); process isolation cannot run it",
			image, build, releaseName(build), ints(builds)), useKnown)
	}
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
	ctx, cancel := context.WithTimeout(ctx, 3*cfg.Timeout)
	defer cancel()
	platforms, err := p.ImagePlatforms(ctx, image)
	if err != nil && missing {
		return fail(nameSandbox, image+" is not in containerd and its registry does not answer ("+oneLine(err.Error())+"): no pod can start", fixMissingSandbox(image, cfg.ImagesDir))
	}
	if err != nil {
		if _, ok := config.SandboxBuilds(image); ok && build != 0 {
			return pass(nameSandbox, fmt.Sprintf("%s has a variant for this host's build %d%s, as its release publishes (its registry did not answer: %s)",
				image, build, releaseName(build), oneLine(err.Error())))
		}
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
	if build == 0 {
		return pass(nameSandbox, fmt.Sprintf("%s has %s", image, list(windows)))
	}
	for _, pl := range windows {
		if pl.OSVersion == "" || strings.HasPrefix(pl.OSVersion, fmt.Sprintf("10.0.%d.", build)) || pl.OSVersion == fmt.Sprintf("10.0.%d", build) {
			return pass(nameSandbox, fmt.Sprintf("%s has %s for this host's build %d%s", image, pl, build, releaseName(build)))
		}
	}
	return fail(nameSandbox, fmt.Sprintf("%s has no variant for this host's build %d%s (it offers %s); process isolation cannot run it", image, build, releaseName(build), list(windows)),
		useKnown)
}

// sandboxFor names the pause image for build: the one join writes, or the
// newest release with a variant for it (config.SandboxImageFor).
func sandboxFor(build int) string {
	if img, ok := config.SandboxImageFor(build); ok {
		return img
	}
	return config.WindowsSandboxImage
}

// releaseName is " (Windows Server 2025)" for a supported build, "" else.
func releaseName(build int) string {
	if r, ok := config.WindowsReleaseOf(build); ok {
		return " (" + r.Name + ", " + r.Tag + ")"
	}
	return ""
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func ints(list []int) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ", ")
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
