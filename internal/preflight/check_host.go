package preflight

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

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
	rel, known := config.WindowsReleaseOf(v.Build)
	if !known {
		return warn(nameBuild, fmt.Sprintf("%s has no LTSC container base image; process-isolated pods need images built for 10.0.%d", build, v.Build),
			"use Windows Server 2019 (17763), 2022 (20348) or 2025 (26100), whose images are tagged ltsc2019, ltsc2022 and ltsc2025")
	}
	return pass(nameBuild, fmt.Sprintf("%s (%s): pods need images tagged %s, e.g. mcr.microsoft.com/windows/nanoserver:%s", build, rel.Name, rel.Tag, rel.Tag))
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
// kubelet, and two kubelets fight over the same containers. A process is
// judged by what it is, as edgecore judges it when it starts
// (envcheck.Judge): a user's program called kubelet.exe is named, and
// passes.
func checkNoKubelet(p Probes) Row {
	if p.Processes == nil || p.Programs == nil {
		return notProbed(nameKubelet)
	}
	procs, err := p.Processes()
	if err != nil {
		return couldNotCheck(nameKubelet, err)
	}
	found, ignored := envcheck.Judge(config.Windows, procs, *p.Programs)
	var names, others []string
	for _, c := range found {
		names = append(names, c.String())
	}
	for _, c := range ignored {
		others = append(others, c.String())
	}
	if len(found) > 0 {
		return fail(nameKubelet, strings.Join(names, ", ")+" running; edgecore runs its own kubelet and the two would fight over the pods",
			"stop them and remove them from start-up: Stop-Service kubelet, kube-proxy; Set-Service kubelet -StartupType Disabled")
	}
	if len(others) > 0 {
		return pass(nameKubelet, "no installed kubelet.exe or kube-proxy.exe is running; not counted: "+strings.Join(others, ", "))
	}
	return pass(nameKubelet, "neither kubelet.exe nor kube-proxy.exe is running")
}

// diskSignals are the kubelet's eviction signals for free space. On
// Windows the images (containerd's root) normally share the system volume
// with the kubelet's root directory, so both are judged on that volume.
var diskSignals = []string{"nodefs.available", "imagefs.available"}

// checkDiskPressure fails the disk row when the volume already has less
// free space than an evictionHard threshold: the kubelet would report
// DiskPressure from its first minute and admit no pod, which shows on the
// cloud side only as pods stuck with "The node had condition:
// [DiskPressure]".
func checkDiskPressure(cfg Config, p Probes, dir string, free uint64, detail string) (Row, bool) {
	if p.DiskSize == nil || len(cfg.EvictionHard) == 0 {
		return Row{}, false
	}
	total, err := p.DiskSize(dir)
	if err != nil || total == 0 {
		return Row{}, false
	}
	for _, signal := range diskSignals {
		v, ok := cfg.EvictionHard[signal]
		if !ok {
			continue
		}
		threshold, err := evictionBytes(v, total)
		if err != nil {
			return fail(nameDisk, fmt.Sprintf("modules.edged.tailoredKubeletConfig.evictionHard %s: %q is neither a percentage nor a quantity (%v)", signal, v, err),
				`write a percentage such as "15%" or a quantity such as "2Gi"`), true
		}
		if free < threshold {
			return fail(nameDisk, fmt.Sprintf("%s, %.1f%% of the %.1f GiB volume: below evictionHard %s %s, so the kubelet reports DiskPressure and admits no pod",
				detail, 100*float64(free)/float64(total), float64(total)/GiB, signal, v),
				"free space on that volume, or lower modules.edged.tailoredKubeletConfig.evictionHard "+signal), true
		}
	}
	return Row{}, false
}

// evictionBytes is a threshold of evictionHard in bytes: a percentage of
// the volume's size, or a quantity.
func evictionBytes(v string, total uint64) (uint64, error) {
	if pct, ok := strings.CutSuffix(strings.TrimSpace(v), "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil || f < 0 || f > 100 {
			return 0, fmt.Errorf("a percentage is between 0%% and 100%%")
		}
		return uint64(f / 100 * float64(total)), nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("negative")
	}
	return uint64(q.Value()), nil
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
	if row, ok := checkDiskPressure(cfg, p, dir, free, detail); ok {
		return row
	}
	switch {
	case free < diskFailFree:
		return fail(nameDisk, detail+"; pulls and pod logs will fill the volume", "free space on that volume, or move modules.edged.rootDirectory to one with at least 10 GiB free")
	case free < diskWarnFree:
		return warn(nameDisk, detail+"; a servercore-based image alone needs about 5 GiB", "free space on that volume, at least 10 GiB")
	}
	return pass(nameDisk, detail)
}
