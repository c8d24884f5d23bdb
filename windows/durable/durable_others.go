//go:build !windows

package durable

import (
	"os"
	"path/filepath"
)

// Rename moves from to to, replacing to, and returns once the move is on
// disk: rename(2) changes only the directories, which stay in the page
// cache until they are flushed, so both directories (one when they are
// the same) are synced. An error is an *os.LinkError, as os.Rename's.
func Rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	dirs := []string{filepath.Dir(to)}
	if d := filepath.Dir(from); d != dirs[0] {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
