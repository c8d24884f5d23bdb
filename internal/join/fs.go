package join

import (
	"errors"
	"io/fs"

	"github.com/kubeedge-windows/edgecore/internal/hostfs"
)

// removeIfEmpty removes the directory dir when it holds nothing and says
// whether it did. A missing directory counts as removed.
func removeIfEmpty(fsys hostfs.FS, dir string) (bool, error) {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if len(entries) > 0 {
		return false, nil
	}
	if err := fsys.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// removeFile removes one file and says whether there was one.
func removeFile(fsys hostfs.FS, path string) (bool, error) {
	err := fsys.Remove(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}
