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
	go w.Run(ctx, diskspace.Interval, func(c diskspace.Change) { reportDiskSpace(c, alert) })
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
