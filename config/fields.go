package config

import (
	"strconv"

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
	// windows is the value on a Windows host; empty leaves upstream's.
	windows string
}

// Windows locations. They keep upstream's layout (C:\etc\kubeedge,
// C:\var\lib\kubelet) so that documentation written for KubeEdge still
// applies, in canonical form: upper-case drive, backslashes, no trailing
// separator.
const (
	winCAFile          = `C:\etc\kubeedge\ca\rootCA.crt`
	winCertFile        = `C:\etc\kubeedge\certs\server.crt`
	winKeyFile         = `C:\etc\kubeedge\certs\server.key`
	winContainerdPipe  = "npipe://./pipe/containerd-containerd"
	winDMIPipe         = "npipe://./pipe/kubeedge-dmi"
	winDataSource      = `C:\var\lib\kubeedge\edgecore.db`
	winRootDirectory   = `C:\var\lib\kubelet`
	winStaticPodPath   = `C:\etc\kubeedge\manifests`
	winPodLogsDir      = `C:\var\log\pods`
	winVolumePluginDir = `C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec`
)

// stringFields lists every OS-dependent string of c, skipping sections the
// configuration leaves out (the minimal sample has no edgeStream, say).
func stringFields(c *v1alpha2.EdgeCoreConfig) []stringField {
	var fs []stringField
	add := func(name string, kind valueKind, ptr *string, windows string) {
		fs = append(fs, stringField{name: name, kind: kind, ptr: ptr, windows: windows})
	}
	if c.DataBase != nil {
		add("database.dataSource", kindPath, &c.DataBase.DataSource, winDataSource)
	}
	m := c.Modules
	if m == nil {
		return fs
	}
	if h := m.EdgeHub; h != nil {
		add("modules.edgeHub.tlsCaFile", kindPath, &h.TLSCAFile, winCAFile)
		add("modules.edgeHub.tlsCertFile", kindPath, &h.TLSCertFile, winCertFile)
		add("modules.edgeHub.tlsPrivateKeyFile", kindPath, &h.TLSPrivateKeyFile, winKeyFile)
	}
	if e := m.Edged; e != nil {
		add("modules.edged.rootDirectory", kindPath, &e.RootDirectory, winRootDirectory)
		add("modules.edged.experimentalMounterPath", kindPath, &e.ExperimentalMounterPath, "")
		if k := e.TailoredKubeletConfig; k != nil {
			const p = "modules.edged.tailoredKubeletConfig."
			add(p+"staticPodPath", kindPath, &k.StaticPodPath, winStaticPodPath)
			add(p+"podLogsDir", kindPath, &k.PodLogsDir, winPodLogsDir)
			add(p+"volumePluginDir", kindPath, &k.VolumePluginDir, winVolumePluginDir)
			add(p+"containerRuntimeEndpoint", kindEndpoint, &k.ContainerRuntimeEndpoint, winContainerdPipe)
			add(p+"imageServiceEndpoint", kindEndpoint, &k.ImageServiceEndpoint, winContainerdPipe)
		}
	}
	if b := m.EventBus; b != nil && b.TLS != nil {
		add("modules.eventBus.eventBusTLS.tlsMqttCAFile", kindPath, &b.TLS.TLSMqttCAFile, winCAFile)
		add("modules.eventBus.eventBusTLS.tlsMqttCertFile", kindPath, &b.TLS.TLSMqttCertFile, winCertFile)
		add("modules.eventBus.eventBusTLS.tlsMqttPrivateKeyFile", kindPath, &b.TLS.TLSMqttPrivateKeyFile, winKeyFile)
	}
	if mm := m.MetaManager; mm != nil && mm.MetaServer != nil {
		s := mm.MetaServer
		add("modules.metaManager.metaServer.tlsCaFile", kindPath, &s.TLSCaFile, winCAFile)
		add("modules.metaManager.metaServer.tlsCertFile", kindPath, &s.TLSCertFile, winCertFile)
		add("modules.metaManager.metaServer.tlsPrivateKeyFile", kindPath, &s.TLSPrivateKeyFile, winKeyFile)
		for i := range s.ServiceAccountKeyFiles {
			add("modules.metaManager.metaServer.serviceAccountKeyFiles["+strconv.Itoa(i)+"]", kindPath, &s.ServiceAccountKeyFiles[i], "")
		}
	}
	if d := m.DeviceTwin; d != nil {
		add("modules.deviceTwin.dmiSockPath", kindSocket, &d.DMISockPath, winDMIPipe)
	}
	if s := m.EdgeStream; s != nil {
		add("modules.edgeStream.tlsTunnelCAFile", kindPath, &s.TLSTunnelCAFile, winCAFile)
		add("modules.edgeStream.tlsTunnelCertFile", kindPath, &s.TLSTunnelCertFile, winCertFile)
		add("modules.edgeStream.tlsTunnelPrivateKeyFile", kindPath, &s.TLSTunnelPrivateKeyFile, winKeyFile)
	}
	return fs
}
