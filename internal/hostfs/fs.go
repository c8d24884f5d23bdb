// Package hostfs is the file system as join, reset, upgrade and
// cni-config use it: one interface, FS, and the host's implementation,
// OS. The process builds one OS in its dependencies (deps.ForHost) and
// hands it down; tests pass an in-memory one (package hostfstest). Paths
// are written for the target OS and taken apart with package ospath, which
// knows that OS's rules wherever the tests run.
package hostfs

import (
	"errors"
	"io/fs"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// FS is the file system.
type FS interface {
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces path with data so that a power cut leaves either
	// the old or the new content: written beside it, flushed, renamed.
	// path's directory must exist.
	WriteFile(path string, data []byte) error
	// CopyFile replaces dst with a copy of src in the same way.
	CopyFile(src, dst string) error
	// CopyPrivate is CopyFile for a file only SYSTEM and Administrators
	// may open from its first byte (on Windows acl.FileSDDL, elsewhere
	// mode 0600): the node's configuration put back or replaced, which
	// would otherwise take its folder's ACL until the next start, where
	// a --config outside C:\etc\kubeedge may let others change it.
	CopyPrivate(src, dst string) error
	// Rename moves from to to, replacing to, and returns once that is on
	// disk. On Windows that fails when to is a running program; renaming
	// a running program away works.
	Rename(from, to string) error
	// Remove removes a file, an empty directory or a link (not its
	// target); a missing one is an error wrapping fs.ErrNotExist.
	Remove(path string) error
	// RemoveAll removes path and everything below it; a missing path is
	// not an error. Files in use stay, and make it fail.
	RemoveAll(path string) error
	Stat(path string) (fs.FileInfo, error)
	// Lstat describes path without following a final symbolic link; an
	// error wrapping fs.ErrNotExist means there is nothing there.
	Lstat(path string) (fs.FileInfo, error)
	// MkdirAll creates path and its missing parents.
	MkdirAll(path string) error
	// SHA256 is the file's checksum in lower-case hex.
	SHA256(path string) (string, error)
	// ReadDir lists a directory's entries, sorted by name, as os.ReadDir.
	ReadDir(path string) ([]fs.DirEntry, error)
	// Tail returns what path holds from offset on and the offset after it,
	// at most MaxTail bytes at a time. A file shorter than offset has been
	// rotated and is read from the start.
	Tail(path string, offset int64) ([]byte, int64, error)
}

// Exists reports whether anything is at path (a link counts, whatever it
// points to).
func Exists(fsys FS, path string) (bool, error) {
	_, err := fsys.Lstat(path)
	return wasThere(err)
}

// wasThere reads the error of an operation on one path: nil means the
// path was there, one wrapping fs.ErrNotExist that it was not, which is
// no error.
func wasThere(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// RemoveTree removes root and everything below it, children before their
// parents, with one Remove per entry. It does not use os.RemoveAll, whose
// unlinkat-based walk fails with "Invalid function" under Wine, and it
// never enters a symbolic link or junction: the link itself is removed and
// whatever it points to stays, so a pod volume linked into the kubelet's
// directory survives. A missing root is not an error. It goes on past a
// failure and returns every one, each naming its path.
func RemoveTree(fsys FS, goos, root string) error {
	info, err := fsys.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	// Lstat reports a link (and a Windows junction) as not a directory,
	// so only real directories are entered.
	if info.IsDir() {
		entries, err := fsys.ReadDir(root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if err := RemoveTree(fsys, goos, ospath.Join(goos, root, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		// The directory cannot be empty; trying would only add a
		// "directory not empty" that hides the cause.
		return errors.Join(errs...)
	}
	if err := fsys.Remove(root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveIfEmpty removes the directory dir when it holds nothing and says
// whether it did. A missing directory counts as removed.
func RemoveIfEmpty(fsys FS, dir string) (bool, error) {
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

// RemoveFile removes one file and says whether there was one.
func RemoveFile(fsys FS, path string) (bool, error) {
	return wasThere(fsys.Remove(path))
}
