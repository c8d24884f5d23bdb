// Package testdir gives tests a temporary directory that can also be
// removed under Wine, where the tests of packages with Windows tests run
// too (make wine-test): there Go's os.RemoveAll, which t.TempDir's
// clean-up uses, fails with "Invalid function", while removing entry by
// entry works.
package testdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// New makes a directory for the test, named after pattern (as
// os.MkdirTemp), and removes it when the test ends, deepest entry first.
func New(t testing.TB, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(t, dir) })
	return dir
}

// Remove removes dir and everything in it, entry by entry, deepest
// first, reporting what it could not remove as a test error.
func Remove(t testing.TB, dir string) {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Remove(paths[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("remove %s: %v", paths[i], err)
		}
	}
}

// Node makes a directory for the test, as New does, where the node may
// keep its files: on Windows at the system drive's root, since %TEMP% is
// below C:\Users, whose folders the node refuses to restrict (package
// protect); elsewhere in the temporary directory.
func Node(t testing.TB, pattern string) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return New(t, pattern)
	}
	drive := os.Getenv("SystemDrive")
	if drive == "" {
		drive = "C:"
	}
	dir, err := os.MkdirTemp(drive+`\`, pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(t, dir) })
	return dir
}
