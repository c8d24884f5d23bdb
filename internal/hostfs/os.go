package hostfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/durable"
)

// OS is the host's file system. Every rename it makes, its own and the
// one that puts a written file in place, is on disk when it returns
// (durable.Rename), and a written file is flushed before that rename:
// upgrade's power-cut test (internal/upgrade/crash_test.go) assumes both.
type OS struct {
	// disk makes the calls whose order the power-cut test depends on;
	// nil is the host's (hostDisk).
	disk disk
}

var _ FS = OS{}

// MaxTail bounds one Tail, so that a log that grows quickly (the kubelet
// is verbose) never makes a poll read megabytes at once; the rest is read
// on the next poll.
const MaxTail = 4 << 20

func (o OS) d() disk {
	if o.disk == nil {
		return hostDisk{}
	}
	return o.disk
}

func (OS) ReadFile(path string) ([]byte, error)   { return os.ReadFile(path) }
func (o OS) Rename(from, to string) error         { return o.d().Rename(from, to) }
func (OS) Remove(path string) error               { return os.Remove(path) }
func (OS) RemoveAll(path string) error            { return os.RemoveAll(path) }
func (OS) Stat(path string) (fs.FileInfo, error)  { return os.Stat(path) }
func (OS) Lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }
func (OS) MkdirAll(path string) error             { return os.MkdirAll(path, 0o750) }
func (OS) SHA256(path string) (string, error)     { return release.FileSHA256(path) }

func (OS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

func (o OS) WriteFile(path string, data []byte) error {
	return writeDurable(o.d(), path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func (o OS) CopyFile(src, dst string) error { return o.copy(src, dst, o.d().CreateTemp) }

func (o OS) CopyPrivate(src, dst string) error { return o.copy(src, dst, o.d().CreatePrivateTemp) }

func (o OS) copy(src, dst string, create func(dir, pattern string) (tempFile, error)) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeDurableWith(o.d(), create, dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

func (OS) Tail(path string, offset int64) ([]byte, int64, error) {
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
	data, err := io.ReadAll(io.LimitReader(f, MaxTail))
	return data, offset + int64(len(data)), err
}

// disk is what OS asks of the operating system to replace a file: a
// temporary file beside it, its flush, the rename that puts it in place
// and the removal of what is left after a failure. It is an interface so
// that a test records the calls in order.
type disk interface {
	CreateTemp(dir, pattern string) (tempFile, error)
	// CreatePrivateTemp is CreateTemp for a file only SYSTEM and
	// Administrators may open from its first byte (acl.CreateFile with
	// acl.FileSDDL; mode 0600 elsewhere). A rename keeps a file's own
	// descriptor, so what is renamed into place keeps it.
	CreatePrivateTemp(dir, pattern string) (tempFile, error)
	// Rename replaces to with from and returns once that is on disk.
	Rename(from, to string) error
	Remove(path string) error
}

// tempFile is the part of *os.File that writeDurable uses.
type tempFile interface {
	io.Writer
	Name() string
	// Sync flushes what was written to the disk.
	Sync() error
	Close() error
}

// hostDisk is the host's: os and durable.
type hostDisk struct{}

func (hostDisk) CreateTemp(dir, pattern string) (tempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (hostDisk) CreatePrivateTemp(dir, pattern string) (tempFile, error) {
	var err error
	for i := 0; i < 100; i++ {
		var f *os.File
		name := filepath.Join(dir, strings.Replace(pattern, "*", strconv.FormatUint(uint64(rand.Uint32()), 10), 1))
		if f, err = acl.CreateFile(name, acl.FileSDDL); err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return nil, err
}

func (hostDisk) Rename(from, to string) error { return durable.Rename(from, to) }
func (hostDisk) Remove(path string) error     { return os.Remove(path) }

// writeDurable writes path through a file beside it that is flushed to
// disk before it is renamed into place, and the rename is on disk before
// it returns. config's writer for configuration files does not flush:
// there a power cut costs an edit, here it could cost the record of which
// binary is where. The rename is tried a few times, because on Windows a
// reader that has the file open at that instant (the node polls the
// journal) makes it fail.
func writeDurable(d disk, path string, write func(io.Writer) error) error {
	return writeDurableWith(d, d.CreateTemp, path, write)
}

// writeDurableWith is writeDurable with the file beside path made by
// create.
func writeDurableWith(d disk, create func(dir, pattern string) (tempFile, error), path string, write func(io.Writer) error) error {
	tmp, err := create(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.Remove(name)
		return err
	}
	for i := 0; ; i++ {
		err = d.Rename(name, path)
		if err == nil || i == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		d.Remove(name)
	}
	return err
}

// WriteDurable replaces path on the host with what write writes, as
// OS.WriteFile does: beside it, flushed, renamed into place on disk. It is
// for content that arrives as a stream (a download).
func WriteDurable(path string, write func(io.Writer) error) error {
	return writeDurable(hostDisk{}, path, write)
}
