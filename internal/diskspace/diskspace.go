// Package diskspace watches the volumes of the folders the node writes to as
// it runs (its database, its log, the kubelet's root directory and the
// pods' logs) and says, once when a folder's volume fills up and once when
// space returns, which folder it is, what the node keeps there and what to
// do. The kubelet reports the pressure on its own root directory's volume to
// the cloud (DiskPressure); the node's database and log may be elsewhere,
// and a full volume there shows otherwise only as SQLite's "database or
// disk is full" on each write the node could not make. The decision takes
// the free-space probe as data (hostprobe's FreeDisk on the host), so its
// tests prove the Windows behaviour over a fake volume on any OS.
package diskspace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// MinFree is the free space below which a folder counts as full: about
// what a burst of the node's own writes takes (SQLite's journal of a batch
// of pod updates, a few seconds of log lines at a high verbosity). Below it
// the next writes fail or are about to.
const MinFree = 16 << 20

// Interval is how often the node looks: the kubelet's eviction manager
// looks at its volumes as often.
const Interval = 10 * time.Second

// Folder is one folder the node writes to.
type Folder struct {
	// Path is the folder, in the host OS's form.
	Path string
	// What the node keeps there, for the message: "the node's database
	// (edgecore.db)".
	What string
	// Setting is what moves it elsewhere: a configuration field or flag.
	Setting string
}

// Probe is the space available on the volume of dir, which exists
// (hostprobe.Set.FreeDisk).
type Probe func(dir string) (uint64, error)

// Change is a folder whose volume filled up (Full) or has room again.
type Change struct {
	Folder
	Full bool
	// Free is the space its volume had when looked at; Probed the folder
	// actually probed (Path, or its nearest existing parent).
	Free   uint64
	Probed string
	// Lasted is, for a folder with room again, how long it was full.
	Lasted time.Duration
}

// Message is what the node says of the change: the folder, what it keeps
// there, how much is free and what to do.
func (c Change) Message() string {
	if c.Full {
		return fmt.Sprintf("no space left for %s in %s: %s free on its volume, under the %s the node needs to record changes. "+
			"The node keeps its pods running and resumes by itself once space returns; until then it cannot record what changes there. "+
			"Free space on that volume, or set %s to a folder on a volume with room",
			c.What, c.Path, Bytes(c.Free), Bytes(MinFree), c.Setting)
	}
	return fmt.Sprintf("space returned for %s in %s: %s free on its volume after %s without", c.What, c.Path, Bytes(c.Free), c.Lasted.Round(time.Second))
}

// Watcher remembers which folders are full between two looks.
type Watcher struct {
	goos    string
	folders []Folder
	probe   Probe
	now     func() time.Time
	since   map[string]time.Time // full folders, by Path, since when
}

// NewWatcher watches folders (paths in goos's form, duplicates dropped)
// through probe. now is the clock (time.Now on the host).
func NewWatcher(goos string, folders []Folder, probe Probe, now func() time.Time) *Watcher {
	w := &Watcher{goos: goos, probe: probe, now: now, since: map[string]time.Time{}}
	seen := map[string]bool{}
	for _, f := range folders {
		if f.Path == "" {
			continue
		}
		f.Path = ospath.Clean(goos, f.Path)
		key := ospath.Key(goos, f.Path)
		if seen[key] {
			continue
		}
		seen[key] = true
		w.folders = append(w.folders, f)
	}
	return w
}

// Check looks at every folder once and returns those whose state changed
// since the last look. A folder that does not exist yet is judged by its
// nearest existing parent, on whose volume it will be made; one whose
// volume cannot be probed keeps its state.
func (w *Watcher) Check() []Change {
	var changes []Change
	for _, f := range w.folders {
		free, probed, err := w.free(f.Path)
		if err != nil {
			continue
		}
		since, wasFull := w.since[f.Path]
		full := free < MinFree
		switch {
		case full && !wasFull:
			w.since[f.Path] = w.now()
			changes = append(changes, Change{Folder: f, Full: true, Free: free, Probed: probed})
		case !full && wasFull:
			delete(w.since, f.Path)
			changes = append(changes, Change{Folder: f, Free: free, Probed: probed, Lasted: w.now().Sub(since)})
		}
	}
	return changes
}

// free probes dir, or its nearest parent that can be probed.
func (w *Watcher) free(dir string) (uint64, string, error) {
	for {
		free, err := w.probe(dir)
		if err == nil {
			return free, dir, nil
		}
		parent := ospath.Dir(w.goos, dir)
		if parent == dir || parent == "." || parent == "" {
			return 0, dir, err
		}
		dir = parent
	}
}

// Run looks every interval until ctx ends and hands each change to report.
func (w *Watcher) Run(ctx context.Context, interval time.Duration, report func(Change)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, c := range w.Check() {
			report(c)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Bytes is n for a person: "0 B", "512 KiB", "15.9 MiB", "2.0 GiB".
func Bytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// DatabaseFolder is the folder of the node's database file db.
func DatabaseFolder(goos, db string) Folder {
	return Folder{Path: ospath.Dir(goos, db), What: "the node's database (" + ospath.Base(goos, db) + ")", Setting: "dataBase.dataSource"}
}

// NodeFolders are the folders the node configured by cfg writes to as it
// runs on goos: its database's, its log file's (logFile, "" when it logs
// to the console only), the kubelet's root directory and the pods' logs.
func NodeFolders(goos string, cfg *v1alpha2.EdgeCoreConfig, logFile string) []Folder {
	var folders []Folder
	if cfg.DataBase != nil && cfg.DataBase.DataSource != "" {
		folders = append(folders, DatabaseFolder(goos, cfg.DataBase.DataSource))
	}
	if logFile != "" {
		folders = append(folders, Folder{Path: ospath.Dir(goos, logFile), What: "the node's log (" + ospath.Base(goos, logFile) + ")", Setting: "--log-file"})
	}
	if cfg.Modules != nil && cfg.Modules.Edged != nil && cfg.Modules.Edged.Enable {
		ed := cfg.Modules.Edged
		folders = append(folders, Folder{Path: ed.RootDirectory, What: "the pods' folders (the kubelet's root directory)", Setting: "modules.edged.rootDirectory"})
		if k := ed.TailoredKubeletConfig; k != nil {
			folders = append(folders, Folder{Path: k.PodLogsDir, What: "the containers' logs", Setting: "modules.edged.tailoredKubeletConfig.podLogsDir"})
		}
	}
	return folders
}

// WaitForRoom returns once the volume of dir (or of its nearest existing
// parent) has MinFree, looking every interval, or with ctx's error when
// ctx ends first. waiting is called once, with the folder's Change, if it
// has to wait. The node opens its database only then: upstream creates the
// database's tables at start and ends the process when it cannot, which a
// service manager turns into a crash loop on a full disk.
func WaitForRoom(ctx context.Context, goos string, f Folder, probe Probe, interval time.Duration, waiting func(Change)) error {
	w := NewWatcher(goos, []Folder{f}, probe, time.Now)
	t := time.NewTicker(interval)
	defer t.Stop()
	said := false
	for {
		free, probed, err := w.free(w.folders[0].Path)
		if err != nil || free >= MinFree {
			// A volume that cannot be probed is not waited for: the
			// database's own error says more.
			return nil
		}
		if !said {
			waiting(Change{Folder: w.folders[0], Full: true, Free: free, Probed: probed})
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
