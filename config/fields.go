package config

import (
	"strconv"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// valueKind says how a configuration string is interpreted.
type valueKind int

const (
	// kindPath is a file or directory.
	kindPath valueKind = iota
	// kindEndpoint is a CRI endpoint URL: npipe:// or tcp:// on Windows,
	// unix:// elsewhere.
	kindEndpoint
	// kindSocket is a gRPC listen address for local clients: a named pipe or
	// a file path on Windows.
	kindSocket
)

// stringField is one string of the configuration that depends on the OS.
type stringField struct {
	name string // the YAML path an operator sees in error messages
	kind valueKind
	ptr  *string
	// windows picks the value on a Windows host from its layout; nil
	// leaves upstream's.
	windows func(Layout) string
}

// Windows endpoints: containerd's CRI pipe and the DMI server's pipe.
const (
	winContainerdPipe = "npipe://./pipe/containerd-containerd"
	winDMIPipe        = "npipe://./pipe/kubeedge-dmi"
)

// windowsTaskManager is whether a Windows node runs the taskManager module:
// cloudcore v1.21 and later send NodeUpgradeJobs only through it.
const windowsTaskManager = true

// stringFields lists every OS-dependent string of c, skipping sections the
// configuration leaves out (the minimal sample has no edgeStream, say).
func stringFields(c *v1alpha2.EdgeCoreConfig) []stringField {
	var fs []stringField
	add := func(name string, kind valueKind, ptr *string, windows func(Layout) string) {
		fs = append(fs, stringField{name: name, kind: kind, ptr: ptr, windows: windows})
	}
	// The Windows default of each field, from the host's layout.
	var (
		caFile          = func(l Layout) string { return l.CAFile }
		certFile        = func(l Layout) string { return l.CertFile }
		keyFile         = func(l Layout) string { return l.KeyFile }
		dataSource      = func(l Layout) string { return l.DataSource }
		rootDirectory   = func(l Layout) string { return l.KubeletRootDir }
		staticPodPath   = func(l Layout) string { return l.StaticPodDir }
		podLogsDir      = func(l Layout) string { return l.PodLogsDir }
		volumePluginDir = func(l Layout) string { return l.VolumePluginDir }
		containerdPipe  = func(Layout) string { return winContainerdPipe }
		dmiPipe         = func(Layout) string { return winDMIPipe }
	)
	if c.DataBase != nil {
		add("database.dataSource", kindPath, &c.DataBase.DataSource, dataSource)
	}
	m := c.Modules
	if m == nil {
		return fs
	}
	if h := m.EdgeHub; h != nil {
		add("modules.edgeHub.tlsCaFile", kindPath, &h.TLSCAFile, caFile)
		add("modules.edgeHub.tlsCertFile", kindPath, &h.TLSCertFile, certFile)
		add("modules.edgeHub.tlsPrivateKeyFile", kindPath, &h.TLSPrivateKeyFile, keyFile)
	}
	if e := m.Edged; e != nil {
		add("modules.edged.rootDirectory", kindPath, &e.RootDirectory, rootDirectory)
		add("modules.edged.experimentalMounterPath", kindPath, &e.ExperimentalMounterPath, nil)
		if k := e.TailoredKubeletConfig; k != nil {
			const p = "modules.edged.tailoredKubeletConfig."
			add(p+"staticPodPath", kindPath, &k.StaticPodPath, staticPodPath)
			add(p+"podLogsDir", kindPath, &k.PodLogsDir, podLogsDir)
			add(p+"volumePluginDir", kindPath, &k.VolumePluginDir, volumePluginDir)
			add(p+"containerRuntimeEndpoint", kindEndpoint, &k.ContainerRuntimeEndpoint, containerdPipe)
			add(p+"imageServiceEndpoint", kindEndpoint, &k.ImageServiceEndpoint, containerdPipe)
		}
	}
	if b := m.EventBus; b != nil && b.TLS != nil {
		add("modules.eventBus.eventBusTLS.tlsMqttCAFile", kindPath, &b.TLS.TLSMqttCAFile, caFile)
		add("modules.eventBus.eventBusTLS.tlsMqttCertFile", kindPath, &b.TLS.TLSMqttCertFile, certFile)
		add("modules.eventBus.eventBusTLS.tlsMqttPrivateKeyFile", kindPath, &b.TLS.TLSMqttPrivateKeyFile, keyFile)
	}
	if mm := m.MetaManager; mm != nil && mm.MetaServer != nil {
		s := mm.MetaServer
		add("modules.metaManager.metaServer.tlsCaFile", kindPath, &s.TLSCaFile, caFile)
		add("modules.metaManager.metaServer.tlsCertFile", kindPath, &s.TLSCertFile, certFile)
		add("modules.metaManager.metaServer.tlsPrivateKeyFile", kindPath, &s.TLSPrivateKeyFile, keyFile)
		for i := range s.ServiceAccountKeyFiles {
			add("modules.metaManager.metaServer.serviceAccountKeyFiles["+strconv.Itoa(i)+"]", kindPath, &s.ServiceAccountKeyFiles[i], nil)
		}
	}
	if d := m.DeviceTwin; d != nil {
		add("modules.deviceTwin.dmiSockPath", kindSocket, &d.DMISockPath, dmiPipe)
	}
	if s := m.EdgeStream; s != nil {
		add("modules.edgeStream.tlsTunnelCAFile", kindPath, &s.TLSTunnelCAFile, caFile)
		add("modules.edgeStream.tlsTunnelCertFile", kindPath, &s.TLSTunnelCertFile, certFile)
		add("modules.edgeStream.tlsTunnelPrivateKeyFile", kindPath, &s.TLSTunnelPrivateKeyFile, keyFile)
	}
	return fs
}

// PathFields names, by their YAML paths, the fields of the configuration
// that hold a file, a folder, a pipe or a socket: the strings this file
// treats as paths, whatever sections a configuration leaves out. A list
// of paths (serviceAccountKeyFiles) is named once, without an index.
func PathFields() []string {
	c := v1alpha2.NewDefaultEdgeCoreConfig()
	if c.Modules.EventBus.TLS == nil {
		c.Modules.EventBus.TLS = &v1alpha2.EventBusTLS{}
	}
	c.Modules.MetaManager.MetaServer.ServiceAccountKeyFiles = []string{""}
	var out []string
	for _, f := range stringFields(c) {
		if f.kind == kindEndpoint {
			continue
		}
		name, _, _ := strings.Cut(f.name, "[")
		out = append(out, name)
	}
	return out
}
