// Package containerd reads and edits the CNI settings in containerd's
// config.toml: the directories its CRI plugin takes network configurations
// and plugin executables from.
//
// containerd keeps them under different keys per config version, and an
// install script that writes the CNI files to one directory while
// config.toml names another leaves containerd with "no network config found
// in ...: cni plugin not initialized". Edit changes only the values of those
// keys, in place, found with a TOML parser that reports byte ranges
// (go-toml's unstable parser), so every other byte of the file, comments and
// layout included, stays as the operator or `containerd config default`
// wrote it.
package containerd

import (
	"fmt"
	"strconv"
	"strings"
)

// Config versions as containerd numbers them in config.toml's `version`.
const (
	// VersionCRIv1 is the original format (no `version` key), where the CRI
	// plugin is `plugins.cri`. containerd 1.x reads it, 2.x migrates it.
	VersionCRIv1 = 1
	// Version17 is containerd 1.5-1.7's format: `version = 2`, the CRI
	// plugin is `plugins."io.containerd.grpc.v1.cri"`. 2.x migrates it.
	Version17 = 2
	// Version2x is containerd 2.x's format: `version = 3`, the CNI settings
	// belong to `plugins."io.containerd.cri.v1.runtime"`. 1.x refuses it.
	Version2x = 3
)

// Keys of the CNI table.
const (
	KeyBinDir  = "bin_dir"
	KeyBinDirs = "bin_dirs"
	KeyConfDir = "conf_dir"
)

// cniTable is where a config version keeps the CNI settings.
func cniTable(version int) []string {
	switch version {
	case VersionCRIv1:
		return []string{"plugins", "cri", "cni"}
	case Version17:
		return []string{"plugins", "io.containerd.grpc.v1.cri", "cni"}
	case Version2x:
		return []string{"plugins", "io.containerd.cri.v1.runtime", "cni"}
	}
	return nil
}

// TablePath writes a table path the way containerd's documentation and
// `containerd config default` name it, e.g.
// plugins."io.containerd.grpc.v1.cri".cni.
func TablePath(path []string) string {
	parts := make([]string, len(path))
	for i, k := range path {
		if isBareKey(k) {
			parts[i] = k
		} else {
			parts[i] = strconv.Quote(k)
		}
	}
	return strings.Join(parts, ".")
}

func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Runtime is the version of the containerd binary, as `containerd --version`
// prints it. The zero value means it is not known.
type Runtime struct {
	Major, Minor, Patch int
}

func (r Runtime) Known() bool { return r != Runtime{} }

func (r Runtime) String() string {
	if !r.Known() {
		return "unknown"
	}
	return fmt.Sprintf("v%d.%d.%d", r.Major, r.Minor, r.Patch)
}

// hasBinDirs reports whether this containerd reads the `bin_dirs` list,
// which arrived in 2.1 (2.0 knows only `bin_dir` and ignores `bin_dirs`).
func (r Runtime) hasBinDirs() bool {
	return r.Major > 2 || r.Major == 2 && r.Minor >= 1
}

// ParseVersionOutput reads the output of `containerd --version`, e.g.
// "containerd github.com/containerd/containerd/v2 v2.0.0 207ad71...".
func ParseVersionOutput(out string) (Runtime, error) {
	for _, f := range strings.Fields(out) {
		// Releases print v2.0.0; a build without the release's linker
		// flags prints 2.0.0+unknown.
		f = strings.TrimPrefix(f, "v")
		if f == "" || f[0] < '0' || f[0] > '9' {
			continue
		}
		core, _, _ := strings.Cut(f, "-") // v2.1.0-rc.1, v1.7.0-beta.0
		core, _, _ = strings.Cut(core, "+")
		parts := strings.Split(core, ".")
		if len(parts) != 3 {
			continue
		}
		var n [3]int
		ok := true
		for i, p := range parts {
			v, err := strconv.Atoi(p)
			if err != nil || v < 0 {
				ok = false
				break
			}
			n[i] = v
		}
		if ok && n != [3]int{} {
			return Runtime{Major: n[0], Minor: n[1], Patch: n[2]}, nil
		}
	}
	return Runtime{}, fmt.Errorf("no version in the output of containerd --version: %q", strings.TrimSpace(out))
}
