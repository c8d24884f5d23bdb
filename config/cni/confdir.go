package cni

import (
	"path/filepath"
	"sort"
)

// confExtensions are the file types containerd's CNI library reads from the
// conf dir; anything else there (a .bak, a .txt) is ignored.
var confExtensions = map[string]bool{".conf": true, ".conflist": true, ".json": true}

// PickConfFile returns the file containerd on Windows loads from its conf
// dir, given the names of the files there, and the config files it ignores.
// containerd's Windows default loads one network config, the first by name,
// so an old sample sorting first silently wins over a fixed file.
func PickConfFile(names []string) (loaded string, ignored []string) {
	var confs []string
	for _, n := range names {
		if confExtensions[filepath.Ext(n)] {
			confs = append(confs, n)
		}
	}
	if len(confs) == 0 {
		return "", nil
	}
	sort.Strings(confs)
	return confs[0], confs[1:]
}
