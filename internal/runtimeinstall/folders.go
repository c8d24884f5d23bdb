package runtimeinstall

import (
	"errors"
	"io/fs"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// Why containerd's folders are judged: containerd gives its descriptor
// only to the folders it creates, and any user may create folders in
// %ProgramData%. Whoever made C:\ProgramData\containerd\root first owns
// every image layer and snapshot the node runs, HostProcess pods
// included, and may plant content under a digest the node pulls later.
// So every folder containerd keeps what the node runs in must be owned by
// SYSTEM, Administrators or TrustedInstaller and changeable by no one
// else (protect's rule for what the node acts on as SYSTEM without owning
// it: Input targets), and join creates the missing ones of an
// installation with the node's descriptor from their first moment.

// DataFolders are the folders of containerd's data as config.toml (data,
// nil when there is none) names them, else containerd's defaults: its
// root (image content and snapshots), its state, and on Windows the
// folder holding both by default (%ProgramData%\containerd). A config.toml
// that cannot be read gives the defaults: containerd would refuse to
// start with it, which preflight's CNI check reports. Outside Windows
// there are none, as protect has no targets there: file modes protect
// those hosts, and these are Windows ACLs.
func DataFolders(l config.Layout, data []byte) []protect.Target {
	if l.GOOS != config.Windows {
		return nil
	}
	root, state := l.ContainerdRootDir, l.ContainerdStateDir
	if data != nil {
		if s, err := containerd.Read(data); err == nil {
			if s.Root != "" {
				root = s.Root
			}
			if s.State != "" {
				state = s.State
			}
		}
	}
	var out []protect.Target
	if l.ContainerdDataDir != "" && (ospath.Within(l.GOOS, l.ContainerdDataDir, root) || ospath.Within(l.GOOS, l.ContainerdDataDir, state)) {
		out = append(out, protect.Target{What: "containerd's data folder, which holds its root and state", Path: l.ContainerdDataDir, Input: true})
	}
	return append(out,
		protect.Target{What: "containerd's root, with every image layer and snapshot the node runs", Path: root, Input: true},
		protect.Target{What: "containerd's state, with the running containers' files", Path: state, Input: true})
}

// HostFolders are DataFolders of the host's containerd, as its
// config.toml at the layout's place says.
func HostFolders(h Host, l config.Layout) ([]protect.Target, error) {
	data, err := h.ReadFile(l.ContainerdConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return DataFolders(l, data), nil
}

// installFolders are the folders an installation uses, parents first,
// as Input targets: containerd's installation folder, its programs' and
// the CNI folders, and its data folders (DataFolders of the config.toml
// join writes).
func (in *Installer) installFolders() []protect.Target {
	if in.goos != config.Windows {
		return nil
	}
	var out []protect.Target
	for _, d := range in.dirs() {
		out = append(out, protect.Target{What: "a folder of containerd's installation, with the programs that run as SYSTEM", Path: d, Input: true})
	}
	return append(out, DataFolders(in.o.Layout, nil)...)
}

// restricted are the targets the folders of an installation are created
// among (protect.Descriptor): containerd's installation and data folders,
// and its root and state, each restricted to SYSTEM and Administrators
// from its first moment, as containerd restricts the ones it creates.
// The narrowest come first: Descriptor takes the first that holds a path.
func (in *Installer) restricted() []protect.Target {
	l := in.o.Layout
	out := []protect.Target{
		{What: "containerd's root", Path: l.ContainerdRootDir, Restrict: true},
		{What: "containerd's state", Path: l.ContainerdStateDir, Restrict: true},
	}
	if l.ContainerdDataDir != "" {
		out = append(out, protect.Target{What: "containerd's data folder", Path: l.ContainerdDataDir, Restrict: true})
	}
	return append(out, protect.Target{What: "containerd's folder", Path: l.ContainerdDir, Restrict: true})
}

// fixFolders is the fix of a refused folder of containerd.
const fixFolders = "each line says how to fix its folder; a folder someone else created before containerd ever ran may hold what they planted: " +
	"remove it (containerd, or join, creates it again restricted to SYSTEM and Administrators), then run join again"
