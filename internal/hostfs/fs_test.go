package hostfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/hostfs/hostfstest"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

func TestRemoveTreeOnTheHostKeepsLinkTargets(t *testing.T) {
	// testdir rather than t.TempDir: Wine cannot remove what the latter
	// made (os.RemoveAll fails with "Invalid function").
	dir := testdir.New(t, "hostfs-test-")
	root := filepath.Join(dir, "kubelet")
	outside := filepath.Join(dir, "volume")
	for _, d := range []string{filepath.Join(root, "pods", "a", "volumes"), filepath.Join(root, "plugins"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "cpu_manager_state"), filepath.Join(root, "pods", "a", "etc-hosts"), filepath.Join(outside, "data")} {
		if err := os.WriteFile(f, []byte("x"), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	// A pod volume linked into the tree: the link goes, its target stays.
	if err := os.Symlink(outside, filepath.Join(root, "pods", "a", "volumes", "data")); err != nil {
		t.Fatal(err)
	}
	if err := hostfs.RemoveTree(hostfs.OS{}, runtime.GOOS, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there: %v", root, err)
	}
	if data, err := os.ReadFile(filepath.Join(outside, "data")); err != nil || string(data) != "x" {
		t.Errorf("the link's target was removed or changed: %v", err)
	}
	// Removing what is gone is not an error: reset runs again after a
	// partial failure.
	if err := hostfs.RemoveTree(hostfs.OS{}, runtime.GOOS, root); err != nil {
		t.Errorf("second removal: %v", err)
	}
}

func TestRemoveTreeRemovesChildrenBeforeParents(t *testing.T) {
	f := hostfstest.New(config.Windows)
	f.AddFile(`C:\var\log\kubeedge\edgecore.log`, "log")
	f.AddFile(`C:\var\log\kubeedge\edgecore-2025-01-02T03-04-05.000.log.gz`, "old")
	f.AddDir(`C:\var\log\kubeedge\empty`)
	f.AddFile(`C:\var\log\other.log`, "not ours")
	if err := hostfs.RemoveTree(f, config.Windows, `C:\var\log\kubeedge`); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`remove C:\var\log\kubeedge\edgecore-2025-01-02T03-04-05.000.log.gz`,
		`remove C:\var\log\kubeedge\edgecore.log`,
		`remove C:\var\log\kubeedge\empty`,
		`remove C:\var\log\kubeedge`,
	}
	if !reflect.DeepEqual(f.Changes, want) {
		t.Errorf("removed\n%s\nwant\n%s", strings.Join(f.Changes, "\n"), strings.Join(want, "\n"))
	}
	if !f.Has(`C:\var\log\other.log`) {
		t.Errorf("removed a file outside the tree")
	}
}

func TestRemoveTreeGoesOnPastAFailureAndNamesIt(t *testing.T) {
	f := hostfstest.New(config.Windows)
	f.AddFile(`C:\etc\kubeedge\ca\rootCA.crt`, "ca")
	f.AddFile(`C:\etc\kubeedge\certs\server.crt`, "cert")
	f.FailRemove[`C:\etc\kubeedge\ca\rootCA.crt`] = errors.New("The process cannot access the file because it is being used by another process.")
	err := hostfs.RemoveTree(f, config.Windows, `C:\etc\kubeedge`)
	if err == nil || !strings.Contains(err.Error(), `remove C:\etc\kubeedge\ca\rootCA.crt: The process cannot access the file`) {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "not empty") {
		t.Errorf("the cause is hidden behind a directory-not-empty error: %v", err)
	}
	if f.Has(`C:\etc\kubeedge\certs\server.crt`) || f.Has(`C:\etc\kubeedge\certs`) {
		t.Errorf("stopped at the first failure instead of removing the rest")
	}
	if !f.Has(`C:\etc\kubeedge`) {
		t.Errorf("removed a directory that still holds a file")
	}
}

func TestRemoveTreeRemovesALinkNotItsTarget(t *testing.T) {
	f := hostfstest.New(config.Windows)
	f.AddFile(`C:\data\keep.txt`, "keep")
	f.AddDir(`C:\var\lib\kubelet\pods`)
	f.AddLink(`C:\var\lib\kubelet\pods\vol`)
	if err := hostfs.RemoveTree(f, config.Windows, `C:\var\lib\kubelet`); err != nil {
		t.Fatal(err)
	}
	if f.Has(`C:\var\lib\kubelet`) || !f.Has(`C:\data\keep.txt`) {
		t.Errorf("paths left: %v", f.Paths())
	}
}

func TestTailReadsFromTheOffsetAndRestartsAfterRotation(t *testing.T) {
	// testdir rather than t.TempDir: Wine cannot remove what the
	// latter made (os.RemoveAll fails with "Invalid function").
	p := filepath.Join(testdir.New(t, "hostfs-test-"), "edgecore.log")
	if err := os.WriteFile(p, []byte("old line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, off, err := hostfs.OS{}.Tail(p, 0)
	if err != nil || off != 9 {
		t.Fatalf("offset %d, %v", off, err)
	}
	fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString("new line\n")
	fh.Close()
	data, off, err := hostfs.OS{}.Tail(p, off)
	if err != nil || string(data) != "new line\n" || off != 18 {
		t.Errorf("got %q at %d, %v", data, off, err)
	}
	// Rotated: the file starts over and is shorter than the offset.
	os.WriteFile(p, []byte("fresh\n"), 0o600)
	data, off, err = hostfs.OS{}.Tail(p, off)
	if err != nil || string(data) != "fresh\n" || off != 6 {
		t.Errorf("after rotation got %q at %d, %v", data, off, err)
	}
	if _, _, err := (hostfs.OS{}).Tail(p+".missing", 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing log: %v", err)
	}
}
