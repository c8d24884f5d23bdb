package node

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/internal/diskspace"
	"github.com/kubeedge-windows/edgecore/windows/eventlog"
)

// watchDiskSpace says, for as long as ctx lasts, when a folder the node
// writes to fills up and when space returns (internal/diskspace): in the
// log, and through alert, which reaches the operator when the log file is
// on the full volume. probe nil (a host that cannot tell) watches nothing.
func watchDiskSpace(ctx context.Context, goos string, cfg *v1alpha2.EdgeCoreConfig, logFile string, probe func(string) (uint64, error), alert func(diskspace.Change)) {
	if probe == nil {
		return
	}
	w := diskspace.NewWatcher(goos, diskspace.NodeFolders(goos, cfg, logFile), probe, time.Now)
	report := func(c diskspace.Change) { reportDiskSpace(c, alert) }
	// The first look before the modules start: a node that cannot start
	// on a full volume has said why.
	for _, c := range w.Check() {
		report(c)
	}
	go w.Run(ctx, diskspace.Interval, report)
}

// waitForDatabaseRoom holds the start while the database's volume is full
// (diskspace.WaitForRoom): upstream ends the process when it cannot create
// the database's tables, and a service would crash-loop until space
// returned. The pods keep running in the runtime meanwhile. It returns
// ctx's error if the node is stopped while it waits.
func waitForDatabaseRoom(ctx context.Context, goos string, cfg *v1alpha2.EdgeCoreConfig, probe func(string) (uint64, error), interval time.Duration) error {
	if probe == nil || cfg.DataBase == nil || cfg.DataBase.DataSource == "" {
		return nil
	}
	f := diskspace.DatabaseFolder(goos, cfg.DataBase.DataSource)
	err := diskspace.WaitForRoom(ctx, goos, f, probe, interval, func(c diskspace.Change) {
		klog.ErrorS(nil, "Waiting for space before opening the node's database; the node starts by itself once there is room", "folder", c.Path, "free", c.Free, "needed", uint64(diskspace.MinFree))
	})
	return err
}

// reportDiskSpace logs c and hands it to alert, if any.
func reportDiskSpace(c diskspace.Change, alert func(diskspace.Change)) {
	if c.Full {
		klog.ErrorS(nil, c.Message(), "folder", c.Path, "free", c.Free)
	} else {
		klog.InfoS(c.Message(), "folder", c.Path, "free", c.Free)
	}
	if alert != nil {
		alert(c)
	}
}

// diskAlert is where a folder filling up is said besides the log file,
// which may be on the full volume: the Application log for a service
// (event 108), standard error for a console run whose log goes to the file
// only; nil when the console has the log already. event writes to the
// Application log (service.WriteEvent).
func diskAlert(asService, fileOnly bool, stderr io.Writer, event func(eventlog.Kind, eventlog.Level, string)) func(diskspace.Change) {
	switch {
	case asService:
		return func(c diskspace.Change) {
			lv := eventlog.Information
			if c.Full {
				lv = eventlog.Warning
			}
			event(eventlog.DiskSpace, lv, c.Message())
		}
	case fileOnly:
		return func(c diskspace.Change) { fmt.Fprintln(stderr, "edgecore: "+c.Message()) }
	}
	return nil
}
