package join

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// FS is the file system as join and reset use it. Paths are written for
// the target OS, and compared and taken apart with package ospath, which
// knows that OS's rules wherever the tests run; OSFS passes them to package
// os, the tests' fake keeps a map of Windows paths.
type FS interface {
	// Lstat describes path without following a final symbolic link; an
	// error wrapping fs.ErrNotExist means there is nothing there.
	Lstat(path string) (fs.FileInfo, error)
	ReadDir(path string) ([]fs.DirEntry, error)
	// Remove removes a file, an empty directory or a link (not its target).
	Remove(path string) error
	ReadFile(path string) ([]byte, error)
	// Tail returns what path holds from offset on and the offset after it.
	// A file shorter than offset has been rotated and is read from the
	// start.
	Tail(path string, offset int64) ([]byte, int64, error)
}

// OSFS is the host's file system.
type OSFS struct{}

func (OSFS) Lstat(path string) (fs.FileInfo, error)     { return os.Lstat(path) }
func (OSFS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }
func (OSFS) Remove(path string) error                   { return os.Remove(path) }
func (OSFS) ReadFile(path string) ([]byte, error)       { return os.ReadFile(path) }

// maxTail bounds one read of the log, so that a log that grows quickly
// (the kubelet is verbose) never makes a poll read megabytes at once; the
// rest is read on the next poll.
const maxTail = 4 << 20

func (OSFS) Tail(path string, offset int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, offset, err
	}
	if info.Size() < offset {
		offset = 0
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTail))
	return data, offset + int64(len(data)), err
}

// exists reports whether anything is at path.
func exists(fsys FS, path string) (bool, error) {
	_, err := fsys.Lstat(path)
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

// removeIfEmpty removes the directory dir when it holds nothing and says
// whether it did. A missing directory counts as removed.
func removeIfEmpty(fsys FS, dir string) (bool, error) {
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
func removeFile(fsys FS, path string) (bool, error) {
	err := fsys.Remove(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}
