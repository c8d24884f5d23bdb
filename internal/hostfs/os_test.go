package hostfs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// recordingDisk is the host's disk with its calls recorded in order, and
// the temporary file named "tmp" in them.
type recordingDisk struct {
	calls    []string
	tmp      string
	failSync bool
}

func (r *recordingDisk) name(p string) string {
	if p == r.tmp {
		return "tmp"
	}
	return filepath.Base(p)
}

func (r *recordingDisk) CreateTemp(dir, pattern string) (tempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	r.tmp = f.Name()
	r.calls = append(r.calls, "create tmp beside "+filepath.Base(strings.TrimSuffix(strings.TrimPrefix(pattern, "."), "-*")))
	return &recordingFile{f: f, r: r}, nil
}

func (r *recordingDisk) CreatePrivateTemp(dir, pattern string) (tempFile, error) {
	t, err := r.CreateTemp(dir, pattern)
	if err == nil {
		r.calls[len(r.calls)-1] = "create private " + strings.TrimPrefix(r.calls[len(r.calls)-1], "create ")
	}
	return t, err
}

func (r *recordingDisk) Rename(from, to string) error {
	r.calls = append(r.calls, "rename (written through) "+r.name(from)+" -> "+r.name(to))
	return hostDisk{}.Rename(from, to)
}

func (r *recordingDisk) Remove(path string) error {
	r.calls = append(r.calls, "remove "+r.name(path))
	return os.Remove(path)
}

// recordingFile is not an *os.File, whose ReadFrom would let io.Copy
// write around Write.
type recordingFile struct {
	f *os.File
	r *recordingDisk
}

func (f *recordingFile) Name() string { return f.f.Name() }

func (f *recordingFile) Write(p []byte) (int, error) {
	if last := len(f.r.calls) - 1; f.r.calls[last] != "write tmp" {
		f.r.calls = append(f.r.calls, "write tmp")
	}
	return f.f.Write(p)
}

func (f *recordingFile) Sync() error {
	f.r.calls = append(f.r.calls, "flush tmp")
	if f.r.failSync {
		return errors.New("the disk is gone")
	}
	return f.f.Sync()
}

func (f *recordingFile) Close() error {
	f.r.calls = append(f.r.calls, "close tmp")
	return f.f.Close()
}

// What OS writes (the journal, the backup's files, the binary's
// copies) is flushed before the rename that puts it in place, and every
// rename goes through the disk's written-through rename: the order the
// power-cut test (internal/upgrade/crash_test.go) takes for granted.
func TestOSFlushesBeforeItRenamesAndRenamesWriteThrough(t *testing.T) {
	dir := filepath.Join(testdir.New(t, "hostfs-test-"), "upgrade dir")
	os.MkdirAll(dir, 0o755)
	d := &recordingDisk{}
	fs := OS{disk: d}
	journal := filepath.Join(dir, "journal.json")

	if err := fs.WriteFile(journal, []byte(`{"phase":"swap"}`)); err != nil {
		t.Fatal(err)
	}
	want := []string{"create tmp beside journal.json", "write tmp", "flush tmp", "close tmp", "rename (written through) tmp -> journal.json"}
	if !reflect.DeepEqual(d.calls, want) {
		t.Errorf("WriteFile: %q, want %q", d.calls, want)
	}
	if b, _ := os.ReadFile(journal); string(b) != `{"phase":"swap"}` {
		t.Errorf("WriteFile wrote %q", b)
	}

	d.calls = nil
	exe := filepath.Join(dir, "edgecore.exe")
	if err := fs.CopyFile(journal, exe+".new"); err != nil {
		t.Fatal(err)
	}
	want = []string{"create tmp beside edgecore.exe.new", "write tmp", "flush tmp", "close tmp", "rename (written through) tmp -> edgecore.exe.new"}
	if !reflect.DeepEqual(d.calls, want) {
		t.Errorf("CopyFile: %q, want %q", d.calls, want)
	}

	d.calls = nil
	if err := fs.Rename(exe+".new", exe); err != nil {
		t.Fatal(err)
	}
	if want := []string{"rename (written through) edgecore.exe.new -> edgecore.exe"}; !reflect.DeepEqual(d.calls, want) {
		t.Errorf("Rename: %q, want %q", d.calls, want)
	}

	// A file that could not be flushed is never renamed into place.
	d.calls, d.failSync = nil, true
	if err := fs.WriteFile(journal, []byte(`{"phase":"start"}`)); err == nil {
		t.Fatal("WriteFile succeeded without its flush")
	}
	want = []string{"create tmp beside journal.json", "write tmp", "flush tmp", "close tmp", "remove tmp"}
	if !reflect.DeepEqual(d.calls, want) {
		t.Errorf("WriteFile with a failing flush: %q, want %q", d.calls, want)
	}
	if b, _ := os.ReadFile(journal); string(b) != `{"phase":"swap"}` {
		t.Errorf("the journal is now %q", b)
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Errorf("left %v", left)
	}
}

// CopyPrivate writes as CopyFile does, through a file that only SYSTEM
// and Administrators may open from its first byte (mode 0600 here): a
// rename keeps that file's own descriptor.
func TestCopyPrivateCreatesTheFileItRenamesPrivate(t *testing.T) {
	dir := filepath.Join(testdir.New(t, "hostfs-test-"), "config dir")
	os.MkdirAll(dir, 0o755)
	src := filepath.Join(dir, "staged.yaml")
	if err := os.WriteFile(src, []byte("token: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &recordingDisk{}
	cfg := filepath.Join(dir, "edgecore.yaml")
	if err := (OS{disk: d}).CopyPrivate(src, cfg); err != nil {
		t.Fatal(err)
	}
	want := []string{"create private tmp beside edgecore.yaml", "write tmp", "flush tmp", "close tmp", "rename (written through) tmp -> edgecore.yaml"}
	if !reflect.DeepEqual(d.calls, want) {
		t.Errorf("CopyPrivate: %q, want %q", d.calls, want)
	}
	// The host's own private file.
	if err := (OS{}).CopyPrivate(src, cfg); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "token: x\n" || info.Mode().Perm() != 0o600 {
		t.Errorf("CopyPrivate wrote %q with mode %v", b, info.Mode().Perm())
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Errorf("left %v", left)
	}
}
