package node

import (
	"fmt"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// prepareFiles makes the node's directories and applies protect's
// description at every start, before the modules start, so that the
// certificates edgehub writes at the first start, the Secrets edged puts
// in volumes and the database land in directories already restricted.
//
// Every directory the configuration names, and every restricted one of
// the description (the kubelet's device plugins among them), is made with
// its descriptor from its first moment (protect.Create): on a fresh
// Windows host none exist, and upstream only creates some, using path
// functions that do not understand backslashes, so SQLite would fail with
// "unable to open database file". Drift is then repaired and logged
// (protect.AtStart), and a folder only an undone configuration named gets
// its ACL back (protect.RestoreRecorded).
//
// What protect refuses (a path or a parent of one that another account
// owns or may rename, an executable others may change) or cannot read
// stops a service before it changes anything: a service runs as SYSTEM,
// unattended, what those paths hold (a planted configuration, upgrade
// journal or flexvolume driver), and its failure is what the service
// manager and `edgecore.exe service status` report. In a console the
// operator who started edgecore reads the same error and the node runs
// on. A configuration that names a directory of Windows itself stops
// every start, since restricting it would break the host.
func prepareFiles(cfg *v1alpha2.EdgeCoreConfig, layout config.Layout, configFile, exe string, asService bool, h protect.Host) error {
	goos := layout.GOOS
	files := protect.ConfigFiles(configFile, upgrade.SettingsPath(goos, configFile))
	targets, err := protect.Targets(cfg, layout, exe, files...)
	if err != nil {
		return err
	}
	if asService {
		if err := protect.Check(targets, h, protect.Starting); err != nil {
			return refusedStart(err)
		}
	}
	if err := prepareCNIFolders(cfg, layout, h); err != nil {
		if asService {
			return refusedStart(err)
		}
		klog.ErrorS(err, "containerd's CNI folders are not protected from other accounts; edgecore runs on in this console, the service would not start")
	}
	for _, d := range config.Directories(cfg, goos) {
		if _, err := protect.Create(goos, targets, d.Path, h); err != nil {
			return fmt.Errorf("%s: cannot create directory %s: %w", d.Field, d.Path, err)
		}
	}
	for _, t := range targets {
		if t.Restrict && !t.File {
			if _, err := protect.Create(goos, targets, t.Path, h); err != nil {
				return fmt.Errorf("cannot create %s, %s: %w", t.Path, t.What, err)
			}
		}
	}
	repairs, err := protect.AtStart(targets, h)
	for _, r := range repairs {
		klog.InfoS("Restricted a directory of the node that others could read or change", "repair", r.String())
	}
	if err == nil {
		// The configuration this node starts with may be one a
		// ConfigUpdateJob or an upgrade put back: a folder only the undone
		// one named gets its ACL back. A failure here leaves that folder
		// restricted, which is safe, and stops nothing.
		restored, rerr := protect.RestoreRecorded(h, targets)
		for _, r := range restored {
			klog.InfoS("A folder no configuration names any more", "folder", r.String())
		}
		if rerr != nil {
			klog.ErrorS(rerr, "Could not give a folder the node no longer uses its access control list back")
		}
	}
	switch {
	case err == nil:
		return nil
	case asService:
		return refusedStart(err)
	}
	klog.ErrorS(err, "The node's files are not protected from other accounts; edgecore runs on in this console, the service would not start")
	return nil
}

// prepareCNIFolders judges, at every start of a node that runs pods,
// containerd's CNI plugin and configuration folders where its config.toml
// at the layout's place puts them (runtimeinstall.CNIFolders): containerd
// runs every plugin there as SYSTEM for the node's pods, and a network
// there chooses which. One that exists is judged entry by entry and
// refused, naming each entry and its fix, when another account owns or
// may change it or what it holds; a missing one is created open to SYSTEM
// and Administrators only, so that no one else makes it first, where a
// config.toml names it. Without a config.toml containerd is not configured
// at the layout's place: its defaults, below %ProgramFiles%, are judged
// where they exist, and not created.
func prepareCNIFolders(cfg *v1alpha2.EdgeCoreConfig, layout config.Layout, h protect.Host) error {
	if layout.GOOS != config.Windows || cfg.Modules == nil || cfg.Modules.Edged == nil || !cfg.Modules.Edged.Enable {
		return nil
	}
	if h.ReadFile == nil {
		return fmt.Errorf("judging containerd's CNI folders: this host cannot read %s", layout.ContainerdConfigFile)
	}
	data, err := runtimeinstall.ReadConfig(h.ReadFile, layout)
	if err != nil {
		return err
	}
	folders := runtimeinstall.CNIFolders(layout, data)
	if data == nil {
		return runtimeinstall.CheckCNIFolders(folders, h)
	}
	made, err := runtimeinstall.CreateCNIFolders(layout.GOOS, folders, h)
	for _, d := range made {
		klog.InfoS("Created a CNI folder of containerd open to SYSTEM and Administrators only", "folder", d)
	}
	return err
}

// refusedStart is the error a service stops with when protect refuses
// its files, logged where join and an operator look first.
func refusedStart(err error) error {
	err = fmt.Errorf("%w\nthe edgecore service does not start until this is fixed: it would run what these paths hold as SYSTEM", err)
	klog.ErrorS(err, "Not starting the node")
	return err
}
