package preflight

import (
	"fmt"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/envcheck"
)

const (
	nameBuild      = "Windows build"
	nameContainers = "Containers feature"
	nameElevated   = "Administrator"
	nameKubelet    = "No kubelet/kube-proxy"
	nameDisk       = "Free disk"
)

// minBuild is Windows Server 2019: the oldest build containerd's Windows
// support and Kubernetes' Windows nodes run on.
const minBuild = 17763

// baseImageTags maps the LTSC builds to the container base image tag built
// for them. Process-isolated containers only run images built for the
// host's own build, so pods must use the matching tag.
var baseImageTags = map[int]struct{ release, tag string }{
	17763: {"Windows Server 2019", "ltsc2019"},
	20348: {"Windows Server 2022", "ltsc2022"},
	26100: {"Windows Server 2025", "ltsc2025"},
}

// testedBuilds are the hosts this edgecore is built and documented for.
var testedBuilds = map[int]bool{17763: true, 20348: true}

func checkWindowsBuild(p Probes) Row {
	if p.WindowsVersion == nil {
		return notProbed(nameBuild)
	}
	v, err := p.WindowsVersion()
	if err != nil {
		return couldNotCheck(nameBuild, err)
	}
	build := fmt.Sprintf("build %d", v.Build)
	if v.UBR > 0 {
		build = fmt.Sprintf("build %d.%d", v.Build, v.UBR)
	}
	if v.ProductName != "" {
		build = v.ProductName + ", " + build
	}
	if v.Build < minBuild {
		return fail(nameBuild, build+" is older than Windows Server 2019 (build 17763)",
			"install Windows Server 2019 or 2022; containerd and edged do not run on older builds")
	}
	img, known := baseImageTags[v.Build]
	if !known {
		return warn(nameBuild, fmt.Sprintf("%s has no LTSC container base image; process-isolated pods need images built for 10.0.%d", build, v.Build),
			"use Windows Server 2019 (17763) or 2022 (20348), whose images are tagged ltsc2019 and ltsc2022")
	}
	detail := fmt.Sprintf("%s (%s): pods need images tagged %s, e.g. mcr.microsoft.com/windows/nanoserver:%s", build, img.release, img.tag, img.tag)
	if !testedBuilds[v.Build] {
		return warn(nameBuild, detail+"; this Windows version is not yet tested with edgecore for Windows", "")
	}
	return pass(nameBuild, detail)
}

func checkContainersFeature(p Probes) Row {
	if p.ContainersFeature == nil {
		return notProbed(nameContainers)
	}
	on, err := p.ContainersFeature()
	switch {
	case err != nil:
		return couldNotCheck(nameContainers, err)
	case !on:
		return fail(nameContainers, "the Windows feature Containers is not enabled",
			"Enable-WindowsOptionalFeature -Online -FeatureName Containers -All, then restart the host")
	}
	return pass(nameContainers, "enabled")
}

func checkElevated(p Probes) Row {
	if p.Elevated == nil {
		return notProbed(nameElevated)
	}
	yes, err := p.Elevated()
	switch {
	case err != nil:
		return couldNotCheck(nameElevated, err)
	case !yes:
		return fail(nameElevated, "not running as Administrator; edgecore needs it for containerd's pipe and its own directories",
			"open PowerShell with \"Run as administrator\" and run the command again")
	}
	return pass(nameElevated, "running elevated")
}

// checkNoKubelet fails on the programs edgecore replaces: its edged is a
// kubelet, and two kubelets fight over the same containers.
func checkNoKubelet(p Probes) Row {
	if p.Processes == nil {
		return notProbed(nameKubelet)
	}
	procs, err := p.Processes()
	if err != nil {
		return couldNotCheck(nameKubelet, err)
	}
	var found []string
	// The same rule edgecore applies when it starts.
	for _, c := range envcheck.Conflicting(config.Windows, procs) {
		found = append(found, fmt.Sprintf("%s (PID %d)", c.Name, c.PID))
	}
	if len(found) > 0 {
		return fail(nameKubelet, strings.Join(found, ", ")+" running; edgecore runs its own kubelet and the two would fight over the pods",
			"stop them and remove them from start-up: Stop-Service kubelet, kube-proxy; Set-Service kubelet -StartupType Disabled")
	}
	return pass(nameKubelet, "neither kubelet.exe nor kube-proxy.exe is running")
}

// Disk thresholds. A Windows Server Core base image takes about 5 GiB once
// unpacked (nanoserver a few hundred MiB), so 10 GiB holds one
// servercore-based pod with room for its logs; under 2 GiB even a small
// image pull or a chatty pod's log fills the volume.
const (
	GiB          = 1 << 30
	diskWarnFree = 10 * GiB
	diskFailFree = 2 * GiB
)

func checkFreeDisk(cfg Config, p Probes) Row {
	if p.FreeDisk == nil || p.Exists == nil {
		return notProbed(nameDisk)
	}
	if cfg.RootDir == "" {
		return warn(nameDisk, "not checked: modules.edged.rootDirectory is not set", "")
	}
	// Before the first start the root directory does not exist yet; the
	// volume it will be created on is what counts.
	dir := cfg.RootDir
	for {
		ok, err := p.Exists(dir)
		if err != nil {
			return couldNotCheck(nameDisk, err)
		}
		parent := ospath.Dir(config.Windows, dir)
		if ok || parent == dir || parent == "." {
			break
		}
		dir = parent
	}
	free, err := p.FreeDisk(dir)
	if err != nil {
		return couldNotCheck(nameDisk, err)
	}
	detail := fmt.Sprintf("%.1f GiB free for %s", float64(free)/GiB, cfg.RootDir)
	switch {
	case free < diskFailFree:
		return fail(nameDisk, detail+"; pulls and pod logs will fill the volume", "free space on that volume, or move modules.edged.rootDirectory to one with at least 10 GiB free")
	case free < diskWarnFree:
		return warn(nameDisk, detail+"; a servercore-based image alone needs about 5 GiB", "free space on that volume, at least 10 GiB")
	}
	return pass(nameDisk, detail)
}
