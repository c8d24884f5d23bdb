package runtimeinstall

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/steps"
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

// Why the CNI folders are judged entry by entry: containerd starts every
// plugin in its CNI bin folders as SYSTEM, for every pod, and a network
// configuration in its CNI conf folder chooses which plugin that is, with
// what arguments. Guides put them in C:\opt\cni\bin and C:\etc\cni\net.d,
// folders any local user may create, and fill before an administrator
// does, under C:\. So each is judged as protect judges a tree the node runs
// code from (an Input Tree target): the folder, its parents, and every
// entry below it, owned by SYSTEM, Administrators or TrustedInstaller,
// changeable by no one else, no link and no file with a second name. A
// missing one is created open to SYSTEM and Administrators only from its
// first moment (CreateCNIFolders), so that no one else makes it first.

// CNIFolders are the CNI plugin and configuration folders as config.toml
// (data, nil when there is none) names them (bin_dir, or 2.1's bin_dirs,
// and conf_dir), else containerd's defaults, the layout's: as Input Tree
// targets (protect.Target.Tree). A config.toml that cannot be read gives
// the defaults, as DataFolders does. Outside Windows there are none.
func CNIFolders(l config.Layout, data []byte) []protect.Target {
	bins, conf := []string{l.CNIBinDir}, l.CNIConfDir
	if data != nil {
		if s, err := containerd.Read(data); err == nil {
			if len(s.BinDirs) > 0 {
				bins = s.BinDirs
			}
			if s.ConfDir != "" {
				conf = s.ConfDir
			}
		}
	}
	return CNITargets(l.GOOS, bins, conf)
}

// CNITargets are the CNI plugin folders bins and the configuration
// folders confs as Input Tree targets, each once, the empty ones left
// out: what join, cni-config, preflight and every start judge. Outside
// Windows there are none.
func CNITargets(goos string, bins []string, confs ...string) []protect.Target {
	if goos != config.Windows {
		return nil
	}
	var out []protect.Target
	add := func(t protect.Target) {
		if t.Path == "" {
			return
		}
		for _, have := range out {
			if ospath.Same(goos, have.Path, t.Path) {
				return
			}
		}
		out = append(out, t)
	}
	for _, b := range bins {
		add(protect.Target{What: "a CNI plugin folder, whose every program containerd runs as SYSTEM", Path: b, Input: true, Tree: true})
	}
	for _, c := range confs {
		add(protect.Target{What: "a CNI configuration folder, whose networks choose the plugin containerd runs as SYSTEM", Path: c, Input: true, Tree: true})
	}
	return out
}

// CreateCNIFolders judges the CNI folders targets (CNITargets) that exist
// (CheckCNIFolders: one holding what another account planted is refused,
// naming each entry and its fix, before anything is made), creates those
// that are missing, with their missing parents, each open to SYSTEM and
// Administrators only from its first moment (protect.Create: the folder
// gets acl.DirectorySDDL, a parent acl.ParentSDDL), then judges them all
// again: one someone else made meanwhile is refused too. It returns the
// folders it made, parents first, also when it fails part way, for the
// caller to record (reset removes only those).
// The folders are containerd's, not the node's: protect's record of the
// node's folders does not name them.
func CreateCNIFolders(goos string, targets []protect.Target, h protect.Host) ([]string, error) {
	if goos != config.Windows {
		return nil, nil
	}
	if err := CheckCNIFolders(targets, h); err != nil {
		return nil, err
	}
	var restricted []protect.Target
	for _, t := range targets {
		restricted = append(restricted, protect.Target{What: t.What, Path: t.Path, Restrict: true})
	}
	quiet := h
	quiet.Record = ""
	var made []string
	for _, t := range targets {
		m, err := protect.Create(goos, restricted, t.Path, quiet)
		made = append(made, m...)
		if err != nil {
			return made, steps.WithFix(err, "make sure no file has that name and the drive is writable, then run the command again")
		}
	}
	return made, CheckCNIFolders(targets, h)
}

// CheckCNIFolders judges the CNI folders targets as they are, changing
// nothing (a dry run, or a decision before any change): a missing one
// passes, as whoever creates it gives it the node's descriptor.
func CheckCNIFolders(targets []protect.Target, h protect.Host) error {
	if err := protect.Check(targets, h, protect.Adopting); err != nil {
		return steps.WithFix(err, fixCNIFolders)
	}
	return nil
}

// fixCNIFolders is the fix of a refused CNI folder.
const fixCNIFolders = "each line says how to fix its entry; containerd runs every program in a CNI plugin folder as SYSTEM, and a network in the CNI configuration folder chooses which: " +
	"remove what another account put there, or choose folders only administrators may change (the default, under %ProgramFiles%\\containerd\\cni), then run the command again"

// HostFolders are DataFolders and CNIFolders of the host's containerd, as
// its config.toml at the layout's place says.
func HostFolders(h Host, l config.Layout) (data, cni []protect.Target, err error) {
	toml, err := ReadConfig(h.ReadFile, l)
	if err != nil {
		return nil, nil, err
	}
	return DataFolders(l, toml), CNIFolders(l, toml), nil
}

// ReadConfig is the host's containerd config.toml at the layout's place,
// nil when there is none.
func ReadConfig(read func(string) ([]byte, error), l config.Layout) ([]byte, error) {
	data, err := read(l.ContainerdConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s for containerd's folders: %w", l.ContainerdConfigFile, err)
	}
	return data, nil
}

// installFolders are the folders an installation uses, parents first,
// as Input targets: containerd's installation folder, its programs', and
// its data folders (DataFolders of the config.toml join writes); the CNI
// folders are cniFolders.
func (in *Installer) installFolders() []protect.Target {
	if in.goos != config.Windows {
		return nil
	}
	l := in.o.Layout
	var out []protect.Target
	for _, d := range []string{l.ContainerdDir, BinDir(l)} {
		out = append(out, protect.Target{What: "a folder of containerd's installation, with the programs that run as SYSTEM", Path: d, Input: true})
	}
	return append(out, DataFolders(l, nil)...)
}

// cniFolders are the CNI folders an installation names in config.toml
// (the layout's), judged entry by entry (CNITargets).
func (in *Installer) cniFolders() []protect.Target {
	l := in.o.Layout
	return CNITargets(in.goos, []string{l.CNIBinDir}, l.CNIConfDir)
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
