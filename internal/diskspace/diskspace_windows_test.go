package diskspace

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// Over the host's own probe (GetDiskFreeSpaceEx, under Wine in `make
// wine-test`): a folder the node has not made yet is judged by its nearest
// existing parent on the same volume, and a volume with room says nothing.
// Filling a real volume is the Linux scenario's part (`make
// chaos-diskfull`); the decision over a full one is proven over the fake
// in diskspace_test.go.
func TestWatcherOverTheHostsProbe(t *testing.T) {
	dir := testdir.New(t, "diskspace-")
	missing := filepath.Join(dir, "not", "made", "yet")
	probe := hostprobe.Host().FreeDisk
	w := NewWatcher(config.Windows, []Folder{{Path: dir, What: "a", Setting: "x"}, {Path: missing, What: "b", Setting: "y"}}, probe, time.Now)
	free, probed, err := w.free(missing)
	if err != nil || probed != dir {
		t.Fatalf("a folder not made yet: probed %q (%v), want its parent %q", probed, err, dir)
	}
	if free < MinFree {
		t.Skipf("the test host's volume has %s free, under %s: cannot show a volume with room", Bytes(free), Bytes(MinFree))
	}
	if c := w.Check(); len(c) != 0 {
		t.Errorf("a volume with %s free: %+v", Bytes(free), c)
	}
}
