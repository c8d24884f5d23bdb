package diskspace

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
)

// volumes is a fake host: the free space of each existing folder (its
// volume's), which the test changes as a disk fills and empties.
type volumes struct {
	mu   sync.Mutex
	free map[string]uint64
}

func (v *volumes) probe(dir string) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	free, ok := v.free[strings.ToLower(dir)]
	if !ok {
		return 0, errors.New("The system cannot find the path specified: " + dir)
	}
	return free, nil
}

func (v *volumes) set(dir string, free uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.free[strings.ToLower(dir)] = free
}

// The Windows node's folders, as the default configuration has them, with
// the database on D: as an operator may move it: C: filling up is said
// once for each of its folders, with the folder, what the node keeps
// there, the free space and the setting to change; D: is not; space
// coming back is said once with how long it lasted; looking again says
// nothing new.
func TestWatcherSaysOnceWhenAFolderFillsAndWhenSpaceReturns(t *testing.T) {
	cfg := v1alpha2.NewDefaultEdgeCoreConfig()
	cfg.DataBase.DataSource = `D:\kubeedge\edgecore.db`
	cfg.Modules.Edged.RootDirectory = `C:\var\lib\kubelet`
	cfg.Modules.Edged.TailoredKubeletConfig.PodLogsDir = `C:\var\log\pods`
	folders := NodeFolders(config.Windows, cfg, `C:\var\log\kubeedge\edgecore.log`)
	if len(folders) != 4 {
		t.Fatalf("folders %+v", folders)
	}
	v := &volumes{free: map[string]uint64{}}
	// The pods' log folder does not exist yet: its nearest parent counts.
	for _, d := range []string{`D:\kubeedge`, `C:\var\log\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log`} {
		v.set(d, 50<<30)
	}
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	w := NewWatcher(config.Windows, folders, v.probe, func() time.Time { return now })
	if c := w.Check(); len(c) != 0 {
		t.Fatalf("changes with room everywhere: %+v", c)
	}
	for _, d := range []string{`C:\var\log\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log`} {
		v.set(d, 4096)
	}
	full := w.Check()
	if len(full) != 3 {
		t.Fatalf("C: full: %d changes %+v, want the log, the pods' folders and the containers' logs", len(full), full)
	}
	for _, c := range full {
		msg := c.Message()
		if !c.Full || !strings.Contains(msg, c.Path) || !strings.Contains(msg, c.What) || !strings.Contains(msg, c.Setting) ||
			!strings.Contains(msg, "4 KiB free") || !strings.Contains(msg, "Free space on that volume") || strings.HasPrefix(c.Path, `D:`) {
			t.Errorf("full: %s", msg)
		}
	}
	if full[2].Probed != `C:\var\log` || full[2].Path != `C:\var\log\pods` {
		t.Errorf("a folder not made yet judged by %q (for %q)", full[2].Probed, full[2].Path)
	}
	if c := w.Check(); len(c) != 0 {
		t.Fatalf("said again while still full: %+v", c)
	}
	now = now.Add(90 * time.Second)
	for _, d := range []string{`C:\var\log\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log`} {
		v.set(d, 3<<30)
	}
	back := w.Check()
	if len(back) != 3 {
		t.Fatalf("space back: %+v", back)
	}
	for _, c := range back {
		if msg := c.Message(); c.Full || !strings.Contains(msg, "space returned for "+c.What+" in "+c.Path+": 3.0 GiB free on its volume after 1m30s without") {
			t.Errorf("back: %s", msg)
		}
	}
	if c := w.Check(); len(c) != 0 {
		t.Fatalf("said again with room: %+v", c)
	}
}

// Exactly at the threshold there is room; a byte under it is full. A
// volume that cannot be probed (a drive gone) changes nothing: the state
// stays until it answers again.
func TestThresholdAndUnprobedVolumes(t *testing.T) {
	v := &volumes{free: map[string]uint64{`e:\data`: MinFree}}
	w := NewWatcher(config.Windows, []Folder{{Path: `E:\data`, What: "x", Setting: "y"}, {Path: `e:\DATA\`, What: "dup"}}, v.probe, time.Now)
	if c := w.Check(); len(c) != 0 {
		t.Fatalf("at the threshold: %+v", c)
	}
	v.set(`E:\data`, MinFree-1)
	if c := w.Check(); len(c) != 1 || !c[0].Full || c[0].What != "x" {
		t.Fatalf("a byte under (one change for one folder named twice): %+v", c)
	}
	delete(v.free, `e:\data`)
	if c := w.Check(); len(c) != 0 {
		t.Fatalf("unprobed: %+v", c)
	}
	v.set(`E:\data`, 1<<30)
	if c := w.Check(); len(c) != 1 || c[0].Full {
		t.Fatalf("back: %+v", c)
	}
}

// Run reports the changes as they come and stops with its context.
func TestRunReportsUntilStopped(t *testing.T) {
	v := &volumes{free: map[string]uint64{"/data": 0}}
	w := NewWatcher("linux", []Folder{{Path: "/data", What: "the node's database (edgecore.db)", Setting: "dataBase.dataSource"}}, v.probe, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Change, 4)
	done := make(chan struct{})
	go func() { w.Run(ctx, time.Millisecond, func(c Change) { got <- c }); close(done) }()
	if c := <-got; !c.Full || !strings.Contains(c.Message(), "no space left for the node's database (edgecore.db) in /data: 0 B free") {
		t.Errorf("first: %s", c.Message())
	}
	v.set("/data", 1<<30)
	if c := <-got; c.Full {
		t.Errorf("second: %s", c.Message())
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}

// Without edged only the database and the log are watched; a console-only
// log adds nothing.
func TestNodeFoldersWithoutEdged(t *testing.T) {
	cfg := v1alpha2.NewDefaultEdgeCoreConfig()
	cfg.Modules.Edged.Enable = false
	cfg.DataBase.DataSource = "/var/lib/kubeedge/edgecore.db"
	f := NodeFolders("linux", cfg, "")
	if len(f) != 1 || f[0].Setting != "dataBase.dataSource" || f[0].Path != "/var/lib/kubeedge" {
		t.Errorf("%+v", f)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 512: "512 B", 4096: "4 KiB", 16 << 20: "16 MiB", 15<<20 + 900<<10: "15.9 MiB", 2 << 30: "2.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// At start the node waits while its database's volume is full, says so
// once, and goes on when space returns; a stop ends the wait; a volume with
// room or one that cannot be probed is not waited for.
func TestWaitForRoom(t *testing.T) {
	db := Folder{Path: `C:\var\lib\kubeedge`, What: "the node's database (edgecore.db)", Setting: "dataBase.dataSource"}
	v := &volumes{free: map[string]uint64{`c:\var\lib\kubeedge`: 0}}
	var said []Change
	looks := 0
	probe := func(dir string) (uint64, error) {
		looks++
		if looks == 4 {
			v.set(dir, 1<<30)
		}
		return v.probe(dir)
	}
	if err := WaitForRoom(context.Background(), config.Windows, db, probe, time.Millisecond, func(c Change) { said = append(said, c) }); err != nil {
		t.Fatal(err)
	}
	if len(said) != 1 || !strings.Contains(said[0].Message(), `no space left for the node's database (edgecore.db) in C:\var\lib\kubeedge: 0 B free`) || looks != 4 {
		t.Errorf("said %+v after %d looks", said, looks)
	}

	v.set(`C:\var\lib\kubeedge`, 0)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if err := WaitForRoom(ctx, config.Windows, db, v.probe, time.Millisecond, func(Change) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped while waiting: %v", err)
	}

	said = nil
	for _, p := range []Probe{func(string) (uint64, error) { return MinFree, nil }, func(string) (uint64, error) { return 0, errors.New("gone") }} {
		if err := WaitForRoom(context.Background(), config.Windows, db, p, time.Hour, func(c Change) { said = append(said, c) }); err != nil || len(said) != 0 {
			t.Errorf("waited: %v, said %+v", err, said)
		}
	}
}
