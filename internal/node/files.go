package node

import (
	"fmt"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
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

// refusedStart is the error a service stops with when protect refuses
// its files, logged where join and an operator look first.
func refusedStart(err error) error {
	err = fmt.Errorf("%w\nthe edgecore service does not start until this is fixed: it would run what these paths hold as SYSTEM", err)
	klog.ErrorS(err, "Not starting the node")
	return err
}
