package node

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"

	"github.com/kubeedge-windows/edgecore/internal/diskspace"
	"github.com/kubeedge-windows/edgecore/windows/eventlog"
)

// A folder filling up is said where the operator can read it when the log
// file may be on the full volume: a service writes event 108 (Warning when
// full, Information when space is back), a console run logging to the file
// only prints it on standard error, and a console that shows the log gets
// nothing more.
func TestDiskAlertReachesTheOperatorBesidesTheLog(t *testing.T) {
	full := diskspace.Change{Folder: diskspace.Folder{Path: `C:\var\lib\kubeedge`, What: "the node's database (edgecore.db)", Setting: "dataBase.dataSource"}, Full: true}
	back := full
	back.Full, back.Free = false, 1<<30

	var events []string
	record := func(k eventlog.Kind, lv eventlog.Level, msg string) {
		events = append(events, strings.Join([]string{k.String(), map[eventlog.Level]string{eventlog.Information: "info", eventlog.Warning: "warning"}[lv], msg}, "|"))
	}
	var stderr bytes.Buffer
	alert := diskAlert(true, true, &stderr, record)
	reportDiskSpace(full, alert)
	reportDiskSpace(back, alert)
	if len(events) != 2 || stderr.Len() != 0 ||
		!strings.HasPrefix(events[0], eventlog.DiskSpace.String()+"|warning|no space left for the node's database (edgecore.db) in C:\\var\\lib\\kubeedge") ||
		!strings.HasPrefix(events[1], eventlog.DiskSpace.String()+"|info|space returned for the node's database") {
		t.Errorf("service: events %q, stderr %q", events, stderr.String())
	}

	events = nil
	alert = diskAlert(false, true, &stderr, record)
	reportDiskSpace(full, alert)
	if len(events) != 0 || !strings.HasPrefix(stderr.String(), "edgecore: no space left for the node's database (edgecore.db) in C:\\var\\lib\\kubeedge: 0 B free") {
		t.Errorf("console, file only: events %q, stderr %q", events, stderr.String())
	}
	if diskAlert(false, false, &stderr, record) != nil {
		t.Error("a console that shows the log gets the line twice")
	}
}

// The node does not open its database on a full volume (its tables could
// not be made, and upstream ends the process): it waits, and a stop ends
// the wait; with room, or a host that cannot tell, it goes on at once.
func TestStartWaitsForRoomForTheDatabase(t *testing.T) {
	cfg := v1alpha2.NewDefaultEdgeCoreConfig()
	cfg.DataBase.DataSource = `D:\kubeedge\edgecore.db`
	var asked []string
	full := func(dir string) (uint64, error) { asked = append(asked, dir); return 4096, nil }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := waitForDatabaseRoom(ctx, config.Windows, cfg, full, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("full: %v", err)
	}
	if len(asked) < 2 || asked[0] != `D:\kubeedge` {
		t.Errorf("looked at %q", asked)
	}
	room := func(string) (uint64, error) { return 1 << 30, nil }
	if err := waitForDatabaseRoom(context.Background(), config.Windows, cfg, room, time.Hour); err != nil {
		t.Errorf("room: %v", err)
	}
	if err := waitForDatabaseRoom(context.Background(), config.Windows, cfg, nil, time.Hour); err != nil {
		t.Errorf("no probe: %v", err)
	}
}
