package config

import (
	"fmt"
	"maps"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// Kind of configuration to print.
const (
	KindMinimal = "minimal"
	KindDefault = "default"
)

// Sample returns the configuration printed for --minconfig (KindMinimal) or
// --defaultconfig (KindDefault) for host. Upstream picks its defaults by
// the OS the binary is compiled for, and on Windows still leaves Linux paths
// and a Linux-only pause image in; here every OS-dependent value is set from
// host.GOOS, so the output is the same whichever OS builds the binary.
func Sample(kind string, host Host) (*v1alpha2.EdgeCoreConfig, error) {
	var c *v1alpha2.EdgeCoreConfig
	switch kind {
	case KindMinimal:
		c = v1alpha2.NewMinEdgeCoreConfig()
	case KindDefault:
		c = v1alpha2.NewDefaultEdgeCoreConfig()
	default:
		return nil, fmt.Errorf("unknown kind of sample config %q: use %q or %q", kind, KindMinimal, KindDefault)
	}
	// Upstream's defaults hand out the kubelet's package-level eviction
	// map itself: a file decoded on top of one sample would change every
	// later one.
	if m := c.Modules; m != nil && m.Edged != nil && m.Edged.TailoredKubeletConfig != nil {
		m.Edged.TailoredKubeletConfig.EvictionHard = maps.Clone(m.Edged.TailoredKubeletConfig.EvictionHard)
	}
	applyHost(c, host)
	return c, nil
}

// applyHost writes the facts of host and the defaults of its OS into c.
func applyHost(c *v1alpha2.EdgeCoreConfig, host Host) {
	e := c.Modules.Edged
	if e != nil && host.Hostname != "" {
		e.HostnameOverride = NodeName(host.Hostname)
	}
	if e != nil && host.NodeIP != "" {
		e.NodeIP = host.NodeIP
	}
	if host.GOOS != Windows {
		return
	}
	// The host's layout, so that a Windows installed on D: gets its files
	// there too; the default host gets C:.
	layout := NewLayout(host)
	for _, f := range stringFields(c) {
		if f.windows != nil {
			*f.ptr = f.windows(layout)
		}
	}
	if t := c.Modules.TaskManager; t != nil {
		t.Enable = windowsTaskManager
	}
	if e == nil {
		return
	}
	e.WindowsPriorityClass = "NORMAL_PRIORITY_CLASS"
	e.WindowsService = false
	e.PodSandboxImage = WindowsSandboxImage
	if k := e.TailoredKubeletConfig; k != nil {
		// Each field gets a pointer of its own: decoding the file writes
		// through them, and a shared one would turn both on at once.
		noQOSCgroups, noCFSQuota, noResolvConf := false, false, ""
		k.CgroupDriver = ""
		k.CgroupsPerQOS = &noQOSCgroups
		k.CPUCFSQuota = &noCFSQuota
		k.EnforceNodeAllocatable = []string{}
		// An explicit empty value: left out, upstream defaults to
		// /etc/resolv.conf.
		k.ResolverConfig = &noResolvConf
		applyWindowsNodeShutdown(k)
	}
}

// Render is the text printed for a sample: a comment saying what it is for,
// then the YAML, which loads back unchanged.
func Render(kind string, host Host) ([]byte, error) {
	c, err := Sample(kind, host)
	if err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("render %s config: %w", kind, err)
	}
	header := "# Minimal edgecore configuration: set modules.edgeHub.httpServer, websocket.server\n" +
		"# and token (from `keadm gettoken` on the cloud side), then start edgecore with --config.\n"
	if kind == KindDefault {
		header = "# Full edgecore configuration with every field at its default value.\n"
	}
	return append([]byte(header), body...), nil
}
