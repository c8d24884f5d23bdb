package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// WindowsPriorityClasses are the process priority classes the Windows
// kubelet accepts for windowsPriorityClass.
var WindowsPriorityClasses = []string{
	"IDLE_PRIORITY_CLASS",
	"BELOW_NORMAL_PRIORITY_CLASS",
	"NORMAL_PRIORITY_CLASS",
	"ABOVE_NORMAL_PRIORITY_CLASS",
	"HIGH_PRIORITY_CLASS",
	"REALTIME_PRIORITY_CLASS",
}

// linuxOnlySandboxImages are pause images without a Windows variant that
// upstream defaults and Linux guides put into configurations.
var linuxOnlySandboxImages = []string{"kubeedge/pause", "docker.io/kubeedge/pause"}

// WindowsSandboxImage is the pause image join and config write: its
// manifest list carries a variant for every build of WindowsReleases
// (Windows Server 2019, 2022 and 2025; 3.9, the earlier default, stops
// before 2025's build 26100), and it is the containerd the release bundles'
// own default. build/bump-runtime.sh --check reports a newer one.
const WindowsSandboxImage = "registry.k8s.io/pause:3.10.2"

// modules.edged.podSandboxImage is not refused when a configuration is
// loaded, whatever image it names: no pod's sandbox comes from it. The
// kubelet hands it to no one (1.32 keeps --pod-infra-container-image only
// as a deprecated flag: "CRI implementations have their own
// configuration"), and the CRI's RunPodSandbox request has no image
// field; containerd starts every sandbox from the image its own
// config.toml pins (2.x: plugins.'io.containerd.cri.v1.images'
// .pinned_images.sandbox, getSandboxImageName in
// internal/cri/server/podsandbox/sandbox_run.go; 1.x: sandbox_image),
// registry.k8s.io/pause when unset. So upstream's default for Windows,
// kubeedge/pause:3.6 (Linux only), which every node keadm joined has,
// starts pods as well as any other value. The value matters where this
// build writes it into containerd's configuration: join, installing the
// runtime the release bundles, refuses a Linux-only image
// (LinuxOnlySandboxImage); preflight checks the image.

// LinuxOnlySandboxImage reports whether img is a pause image known to
// have no Windows variant.
func LinuxOnlySandboxImage(img string) bool {
	repo := img
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return contains(linuxOnlySandboxImages, repo)
}

// Validate applies the rules of goos that upstream validation does not know:
// on Windows, the kubelet settings that make it fail or panic there. Each
// error names the field, the value and the fix. Call it after Normalize.
func Validate(c *v1alpha2.EdgeCoreConfig, goos string) field.ErrorList {
	if goos != Windows {
		return nil
	}
	var errs field.ErrorList
	for _, f := range stringFields(c) {
		if err := validateWindowsString(f); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Modules == nil || c.Modules.Edged == nil || !c.Modules.Edged.Enable {
		return errs
	}
	e := c.Modules.Edged
	edged := field.NewPath("modules", "edged")
	if !contains(WindowsPriorityClasses, e.WindowsPriorityClass) {
		errs = append(errs, field.NotSupported(edged.Child("windowsPriorityClass"), e.WindowsPriorityClass, WindowsPriorityClasses))
	}
	if e.WindowsService {
		errs = append(errs, field.Invalid(edged.Child("windowsService"), true,
			"would make the embedded kubelet try to install itself as a service; edgecore is the service "+
				"(`edgecore.exe service install`): set windowsService: false; for a node upstream's keadm joined, "+
				"`edgecore.exe takeover` does that and moves its service to this build"))
	}
	k := e.TailoredKubeletConfig
	if k == nil {
		return errs
	}
	kp := edged.Child("tailoredKubeletConfig")
	if k.CgroupsPerQOS != nil && *k.CgroupsPerQOS {
		errs = append(errs, field.Invalid(kp.Child("cgroupsPerQOS"), true, "Windows has no cgroups: set cgroupsPerQOS: false"))
	}
	if k.CPUCFSQuota != nil && *k.CPUCFSQuota {
		errs = append(errs, field.Invalid(kp.Child("cpuCFSQuota"), true, "CFS quotas are Linux-only: set cpuCFSQuota: false"))
	}
	if len(k.EnforceNodeAllocatable) > 0 {
		errs = append(errs, field.Invalid(kp.Child("enforceNodeAllocatable"), k.EnforceNodeAllocatable,
			"node allocatable is enforced through cgroups, which Windows lacks: set enforceNodeAllocatable: []"))
	}
	if k.ResolverConfig != nil && *k.ResolverConfig != "" {
		errs = append(errs, field.Invalid(kp.Child("resolvConf"), *k.ResolverConfig,
			`Windows has no resolv.conf and the kubelet takes the host's DNS settings: set resolvConf: ""`))
	}
	// The 1.32 kubelet refuses any value here outside Linux (it sets the
	// cgroup v2 memory.oom.group flag); say so before it starts.
	if k.SingleProcessOOMKill != nil {
		errs = append(errs, field.Invalid(kp.Child("singleProcessOOMKill"), *k.SingleProcessOOMKill,
			"a cgroup v2 setting of Linux, which the kubelet refuses on Windows: remove the line"))
	}
	errs = append(errs, validateNodeShutdown(k)...)
	return errs
}

func validateWindowsString(f stringField) *field.Error {
	v := *f.ptr
	path := field.NewPath(f.name)
	switch f.kind {
	case kindEndpoint:
		if _, ok := pipeName(v); ok || strings.HasPrefix(v, "tcp://") {
			return nil
		}
		if v == "" {
			return field.Required(path, "the Windows kubelet needs a container runtime endpoint: use "+winContainerdPipe)
		}
		if strings.HasPrefix(v, "unix://") {
			return field.Invalid(path, v, "unix:// sockets are the Linux endpoint of containerd; on Windows use "+winContainerdPipe)
		}
		return field.Invalid(path, v, "use a named pipe ("+winContainerdPipe+") or a tcp:// address")
	case kindSocket:
		if _, ok := pipeName(v); ok || v == "" {
			return nil
		}
	}
	if v != "" && !ospath.IsAbs(Windows, v) {
		return field.Invalid(path, v, fmt.Sprintf("a relative path depends on the directory edgecore is started from "+
			"(System32 for a service): use an absolute path such as %s", absExample(f)))
	}
	if name, why, fix := ospath.BadName(Windows, v); name != "" {
		if fix == "" {
			fix = "rename it, for example to " + absExample(f)
		}
		return field.Invalid(path, v, fmt.Sprintf("the name %q cannot be used: %s; fix: %s", name, why, fix))
	}
	return nil
}

// absExample is the absolute path suggested for a relative value: the
// field's default, or the value under the kubeedge directory of the default
// Windows host.
func absExample(f stringField) string {
	layout := NewLayout(Host{GOOS: Windows})
	if f.windows != nil {
		return f.windows(layout)
	}
	rel := WindowsPath(*f.ptr)
	if len(rel) >= 2 && rel[1] == ':' {
		rel = rel[2:] // "C:x" is relative to drive C's current directory
	}
	return ospath.Join(Windows, layout.KubeEdgeDir, strings.TrimLeft(rel, `.\`))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
