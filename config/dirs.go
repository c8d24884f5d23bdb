package config

import (
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Directory is one directory edgecore needs before its modules start, with
// the field that names it so that a failure can point at the setting.
type Directory struct {
	Field string
	Path  string
}

// Directories lists the directories the configuration names for the
// database, the kubelet root, certificates, pod logs, static pods and
// flexvolume drivers. On a
// fresh Windows host none of them exist, and upstream only creates some,
// using path functions that do not understand backslashes.
func Directories(c *v1alpha2.EdgeCoreConfig, goos string) []Directory {
	var dirs []Directory
	seen := map[string]bool{}
	add := func(field, path string) {
		// The same directory spelled twice is one: the first field names it.
		key := ospath.Key(goos, path)
		if path == "" || seen[key] {
			return
		}
		seen[key] = true
		dirs = append(dirs, Directory{Field: field, Path: path})
	}
	if c.DataBase != nil {
		add("database.dataSource", ospath.Dir(goos, c.DataBase.DataSource))
	}
	if c.Modules == nil {
		return dirs
	}
	if h := c.Modules.EdgeHub; h != nil && h.Enable {
		add("modules.edgeHub.tlsCaFile", ospath.Dir(goos, h.TLSCAFile))
		add("modules.edgeHub.tlsCertFile", ospath.Dir(goos, h.TLSCertFile))
		add("modules.edgeHub.tlsPrivateKeyFile", ospath.Dir(goos, h.TLSPrivateKeyFile))
	}
	if e := c.Modules.Edged; e != nil && e.Enable {
		add("modules.edged.rootDirectory", e.RootDirectory)
		if k := e.TailoredKubeletConfig; k != nil {
			add("modules.edged.tailoredKubeletConfig.podLogsDir", k.PodLogsDir)
			add("modules.edged.tailoredKubeletConfig.staticPodPath", k.StaticPodPath)
			// The kubelet runs the flexvolume drivers it finds there.
			add("modules.edged.tailoredKubeletConfig.volumePluginDir", k.VolumePluginDir)
		}
	}
	return dirs
}
