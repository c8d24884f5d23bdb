package preflight

import (
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
)

const (
	nameProtected      = "Node files protected"
	nameRuntimeFolders = "containerd folders"
	nameCNIFolders     = "CNI folders"
)

// checkCNIFolders reports each CNI plugin or configuration folder of
// containerd (where its config.toml puts them, else its defaults) that
// someone other than SYSTEM, Administrators or TrustedInstaller owns or
// may change, and each entry in one that another account owns, that is a
// link, that has a second name or that others may change, as a FAIL with
// its fix: containerd runs every plugin there as SYSTEM, and a network
// there chooses which; join, cni-config and the service's start refuse
// them. A folder that does not exist passes: whoever of those creates it
// makes it restricted.
func checkCNIFolders(cfg Config, p Probes) []Row {
	return containerdFolderRows(nameCNIFolders, cfg, p, runtimeinstall.CNIFolders,
		"owned and changeable by SYSTEM and Administrators only, with everything in them, where they exist "+
			"(join, cni-config or the service's start creates a missing one so): ")
}

// checkRuntimeFolders reports each folder of containerd's data (its root,
// with every image layer the node runs, its state, and the folder holding
// them, where its config.toml puts them) that someone other than SYSTEM,
// Administrators or TrustedInstaller owns or may change, as a FAIL: join
// refuses such a folder, since whoever made it before containerd did owns
// what the node runs as SYSTEM. A folder that does not exist yet passes:
// join creates it restricted.
func checkRuntimeFolders(cfg Config, p Probes) []Row {
	return containerdFolderRows(nameRuntimeFolders, cfg, p, runtimeinstall.DataFolders,
		"owned and changeable by SYSTEM and Administrators only, where they exist: ")
}

// containerdFolderRows are the rows of the check called name over the
// folders of containerd that folders finds in its config.toml (nil data
// when it cannot be read): protect's findings (findingRows), or one PASS
// saying passed and the folders.
func containerdFolderRows(name string, cfg Config, p Probes, folders func(config.Layout, []byte) []protect.Target, passed string) []Row {
	if cfg.Layout.GOOS != config.Windows {
		return nil
	}
	if p.Protect == nil {
		return []Row{notProbed(name)}
	}
	var data []byte
	if p.ReadFile != nil {
		data, _ = p.ReadFile(cfg.Layout.ContainerdConfigFile)
	}
	targets := folders(cfg.Layout, data)
	findings, err := protect.Audit(targets, *p.Protect, protect.Adopting)
	if err != nil {
		return []Row{couldNotCheck(name, err)}
	}
	if len(findings) == 0 {
		var paths []string
		for _, t := range targets {
			paths = append(paths, t.Path)
		}
		return []Row{pass(name, passed+strings.Join(paths, ", "))}
	}
	return findingRows(name, findings)
}

// findingRows are protect's findings as rows of the check called name: a
// FAIL for one a command refuses, a WARN for one a start repairs.
func findingRows(name string, findings []protect.Finding) []Row {
	var rows []Row
	for _, f := range findings {
		detail := f.Path + " (" + f.Target.What + ") " + f.Problem
		if f.Refuse {
			rows = append(rows, fail(name, detail, f.Fix))
		} else {
			rows = append(rows, warn(name, detail, f.Fix))
		}
	}
	return rows
}

// checkProtected reports each directory or file of the node that other
// accounts may read (the database caches Secrets, the kubelet's root holds
// secret volumes, C:\etc\kubeedge the key and the join token) as a WARN
// that edgecore repairs at its next start, and each one another account
// owns, or a parent of one another account owns or may rename, as a
// FAIL: its owner may rewrite its ACL or replace it, whoever may rename a
// parent may put their own in its place, and edgecore refuses to take
// either over; the service does not start until it is fixed.
func checkProtected(cfg Config, p Probes) []Row {
	if cfg.ProtectedErr != nil {
		return []Row{fail(nameProtected, oneLine(cfg.ProtectedErr.Error()), "give the field named above a directory of the node's own")}
	}
	if len(cfg.Protected) == 0 {
		// Not a Windows configuration: FromConfig lists the node's
		// directories for every Windows host, and elsewhere file modes,
		// not ACLs, protect them.
		return nil
	}
	if p.Protect == nil {
		return []Row{notProbed(nameProtected)}
	}
	findings, err := protect.Audit(cfg.Protected, *p.Protect, protect.Adopting)
	if err != nil {
		return []Row{couldNotCheck(nameProtected, err)}
	}
	if len(findings) == 0 {
		var paths []string
		for _, t := range cfg.Protected {
			if t.Restrict {
				paths = append(paths, t.Path)
			}
		}
		return []Row{pass(nameProtected, "SYSTEM and Administrators only, owned by Administrators, where they exist: "+strings.Join(paths, ", "))}
	}
	return findingRows(nameProtected, findings)
}
