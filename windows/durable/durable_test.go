package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Rename has os.Rename's meaning on every system: it replaces the target,
// moves between directories, and fails with an *os.LinkError that keeps
// the cause.
func TestRenameReplacesAndMoves(t *testing.T) {
	// Not t.TempDir: its os.RemoveAll fails under Wine 8 ("Invalid
	// function"), where make wine-test runs this test; the test removes
	// what it made, deepest first.
	root, err := os.MkdirTemp("", "durable-")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "dir with space")
	sub := filepath.Join(dir, "sub")
	from, to := filepath.Join(dir, "new"), filepath.Join(dir, "edgecore.exe")
	moved := filepath.Join(sub, "edgecore.exe.old")
	t.Cleanup(func() {
		for _, p := range []string{moved, from, to, sub, dir, root} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Error(err)
			}
		}
	})
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(from, []byte("new"), 0o644)
	os.WriteFile(to, []byte("old"), 0o644)
	if err := Rename(from, to); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(to); err != nil || string(b) != "new" {
		t.Errorf("after replacing: %q, %v", b, err)
	}
	if _, err := os.Stat(from); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the source is still there: %v", err)
	}
	if err := Rename(to, moved); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(moved); err != nil || string(b) != "new" {
		t.Errorf("after moving to another directory: %q, %v", b, err)
	}
	err = Rename(from, to)
	var le *os.LinkError
	if !errors.As(err, &le) || !errors.Is(err, fs.ErrNotExist) || le.Old != from || le.New != to {
		t.Errorf("renaming a missing file = %#v, want an *os.LinkError naming both paths and wrapping fs.ErrNotExist", err)
	}
}
