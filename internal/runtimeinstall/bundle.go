// Package runtimeinstall installs the container runtime the release zip
// bundles (containerd, ctr, the runhcs shim and the Windows CNI plugins,
// built by build/runtime.sh) on a host that has none: it copies the
// programs into containerd's folder, restricted to SYSTEM and
// Administrators, writes a config.toml with the node's sandbox image and
// CNI folders, registers and starts the containerd service and waits until
// its CRI answers. `edgecore.exe join` runs it as steps of its plan, each
// with its undo, and records what it installed so that `edgecore.exe
// reset` removes that and nothing else. Every effect goes through Host, so
// the decisions and the rollback are tested with fakes on any build host.
package runtimeinstall

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// BundleDir is the release's folder that holds the runtime, beside
// edgecore.exe; build/package.sh fills it.
const BundleDir = "runtime"

// File is a bundled program: where it is in the release (under BundleDir) and where
// it goes on the host.
type File struct {
	// Sub is the folder under BundleDir: "containerd" or "cni".
	Sub, Name string
}

// Files are the bundle's programs. containerd finds its shim beside
// itself; the CNI plugins go to the folder config.toml names.
var Files = []File{
	{"containerd", "containerd.exe"},
	{"containerd", "ctr.exe"},
	{"containerd", "containerd-shim-runhcs-v1.exe"},
	{"cni", "win-bridge.exe"},
	{"cni", "win-overlay.exe"},
	{"cni", "host-local.exe"},
}

// BinDir is where the containerd programs go: bin under containerd's
// folder, as containerd's own release archive lays them out.
func BinDir(l config.Layout) string { return ospath.Join(l.GOOS, l.ContainerdDir, "bin") }

// RecordName is the name of RecordFile.
const RecordName = "installed-by-edgecore.json"

// RecordFile is the record of what join installed, in containerd's folder:
// reset removes what it lists and only that.
func RecordFile(l config.Layout) string {
	return ospath.Join(l.GOOS, l.ContainerdDir, RecordName)
}

// source and target of a bundled file for a release in releaseDir.
func (f File) source(goos, releaseDir string) string {
	return ospath.Join(goos, releaseDir, BundleDir, f.Sub, f.Name)
}

// Target is where the file is installed on the host; `upgrade` replaces
// it there.
func (f File) Target(l config.Layout) string {
	if f.Sub == "cni" {
		return ospath.Join(l.GOOS, l.CNIBinDir, f.Name)
	}
	return ospath.Join(l.GOOS, BinDir(l), f.Name)
}

// PackagePath is the file's name in a release zip's SHA256SUMS, relative
// to the zip's top folder.
func (f File) PackagePath() string { return BundleDir + "/" + f.Sub + "/" + f.Name }

// The runtime choices of join's --runtime flag.
const (
	// ChoiceAuto installs the bundled runtime unless the host has one: a
	// containerd service, or a runtime answering at the node's endpoint.
	ChoiceAuto = "auto"
	// ChoiceBundled installs the bundled runtime and refuses a host that
	// has a containerd service, naming how to remove it.
	ChoiceBundled = "bundled"
	// ChoiceHost never installs: the node uses the host's runtime.
	ChoiceHost = "host"
	// FlagRuntime is the flag's name, for errors.
	FlagRuntime = "--runtime"
)

// ValidChoice reports a --runtime value that is none of the choices.
func ValidChoice(v string) error {
	switch v {
	case ChoiceAuto, ChoiceBundled, ChoiceHost:
		return nil
	}
	return fmt.Errorf("%s %q is not a choice: use %s (install the release's containerd when the host has none), %s (always, refusing a host that has one) or %s (never)",
		FlagRuntime, v, ChoiceAuto, ChoiceBundled, ChoiceHost)
}

// ManifestFile is the bundle's versions, as build/package.sh writes them.
const ManifestFile = "manifest.json"

// BundleVersions reads the versions of the bundle in releaseDir
// (runtime\manifest.json), for the output and the record; nil when there is
// no bundle or it gives none, which changes nothing but those lines.
func BundleVersions(h Host, goos, releaseDir string) map[string]string {
	if h.ReadFile == nil {
		return nil
	}
	data, err := h.ReadFile(ospath.Join(goos, releaseDir, BundleDir, ManifestFile))
	if err != nil {
		return nil
	}
	var v map[string]string
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	for k, s := range v {
		// Printed to the console: no control characters.
		if strings.IndexFunc(k+s, unicode.IsControl) >= 0 {
			return nil
		}
	}
	return v
}
