// Package hostfstest is an in-memory hostfs.FS for tests: a file system
// of the target OS's paths in a map, which records every change so that a
// test can tell what was touched, in order, and can make a removal or a
// directory's creation fail.
package hostfstest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
)

// FS is a file system in a map, keyed by path as written. Every change
// made through its hostfs.FS methods (and Mkdir) is recorded in Changes;
// the Add methods set up a host before the test and are not.
type FS struct {
	mu    sync.Mutex
	goos  string
	nodes map[string]*node
	// Changes are "mkdir P", "write P", "copy S -> D", "copy private S ->
	// D", "rename F -> T",
	// "remove P" and "removeall P", in order.
	Changes []string
	// FailMkdir and FailRemove make Mkdir and Remove of a path fail with
	// their error.
	FailMkdir  map[string]error
	FailRemove map[string]error
}

var _ hostfs.FS = (*FS)(nil)

type node struct {
	dir  bool
	link bool
	data []byte
}

// New is an empty file system of goos with only its root.
func New(goos string) *FS {
	f := &FS{goos: goos, nodes: map[string]*node{}, FailMkdir: map[string]error{}, FailRemove: map[string]error{}}
	if goos == config.Windows {
		f.nodes[`C:\`] = &node{dir: true}
	} else {
		f.nodes["/"] = &node{dir: true}
	}
	return f
}

// NotExist is the error for a missing path, as package os makes it.
func NotExist(op, path string) error {
	return &fs.PathError{Op: op, Path: path, Err: fs.ErrNotExist}
}

// AddDir creates path and its parents.
func (f *FS) AddDir(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addDir(path)
}

func (f *FS) addDir(path string) []string {
	var made []string
	for _, a := range ospath.Ancestors(f.goos, path) {
		if _, ok := f.nodes[a]; !ok {
			f.nodes[a] = &node{dir: true}
			made = append(made, a)
		}
	}
	return made
}

// AddFile creates path, with its parents, holding data.
func (f *FS) AddFile(path, data string) {
	f.AddDir(ospath.Dir(f.goos, path))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes[path] = &node{data: []byte(data)}
}

// AddLink makes path a symbolic link or junction to a directory that is
// not in the map; a directory already at path becomes one, what the map
// holds below it then being what the link's target holds.
func (f *FS) AddLink(path string) {
	f.AddDir(ospath.Dir(f.goos, path))
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nodes[path]; ok && n.dir {
		n.link = true
		return
	}
	f.nodes[path] = &node{dir: true, link: true}
}

// AppendFile adds data to the end of path, creating it.
func (f *FS) AppendFile(path, data string) {
	f.AddDir(ospath.Dir(f.goos, path))
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[path]
	if !ok {
		n = &node{}
		f.nodes[path] = n
	}
	n.data = append(n.data, data...)
}

// Has reports whether anything is at path.
func (f *FS) Has(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.nodes[path]
	return ok
}

// Content is what the file at path holds, "" when there is none.
func (f *FS) Content(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nodes[path]; ok {
		return string(n.data)
	}
	return ""
}

// Paths lists everything, sorted, for comparing a host before and after.
func (f *FS) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p := range f.nodes {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Record adds a change made on the file system's behalf (a fake of a
// writer that bypasses it).
func (f *FS) Record(format string, args ...interface{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(format, args...)
}

func (f *FS) record(format string, args ...interface{}) {
	f.Changes = append(f.Changes, fmt.Sprintf(format, args...))
}

type info struct {
	name string
	n    *node
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return int64(len(i.n.data)) }
func (i info) Mode() fs.FileMode {
	switch {
	case i.n.link:
		return fs.ModeSymlink
	case i.n.dir:
		return fs.ModeDir
	}
	return 0
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.n.dir && !i.n.link }
func (i info) Sys() interface{}   { return nil }

func (f *FS) base(p string) string {
	d := ospath.Dir(f.goos, p)
	return strings.TrimPrefix(strings.TrimPrefix(p, d), ospath.Separator(f.goos))
}

func (f *FS) Lstat(path string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[path]
	if !ok {
		return nil, NotExist("lstat", path)
	}
	return info{name: f.base(path), n: n}, nil
}

// Stat is Lstat except for a link, whose target is not in the map: it
// reads as a directory.
func (f *FS) Stat(path string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[path]
	if !ok {
		return nil, NotExist("stat", path)
	}
	if n.link {
		n = &node{dir: true}
	}
	return info{name: f.base(path), n: n}, nil
}

// Mkdir creates one directory in an existing one, as os.Mkdir.
func (f *FS) Mkdir(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.FailMkdir[path]; err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	if _, ok := f.nodes[path]; ok {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrExist}
	}
	if p, ok := f.nodes[ospath.Dir(f.goos, path)]; !ok || !p.dir {
		return NotExist("mkdir", path)
	}
	f.nodes[path] = &node{dir: true}
	f.record("mkdir %s", path)
	return nil
}

func (f *FS) MkdirAll(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range ospath.Ancestors(f.goos, path) {
		if err := f.FailMkdir[a]; err != nil {
			return &fs.PathError{Op: "mkdir", Path: a, Err: err}
		}
	}
	for _, d := range f.addDir(path) {
		f.record("mkdir %s", d)
	}
	return nil
}

func (f *FS) children(path string) []string {
	var out []string
	for p := range f.nodes {
		if p != path && ospath.Dir(f.goos, p) == path {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (f *FS) ReadDir(path string) ([]fs.DirEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[path]
	if !ok {
		return nil, NotExist("readdir", path)
	}
	if !n.dir || n.link {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: errors.New("not a directory")}
	}
	var out []fs.DirEntry
	for _, c := range f.children(path) {
		out = append(out, fs.FileInfoToDirEntry(info{name: f.base(c), n: f.nodes[c]}))
	}
	return out, nil
}

func (f *FS) Remove(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.FailRemove[path]; err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	n, ok := f.nodes[path]
	if !ok {
		return NotExist("remove", path)
	}
	if n.dir && !n.link && len(f.children(path)) > 0 {
		return &fs.PathError{Op: "remove", Path: path, Err: errors.New("directory not empty")}
	}
	delete(f.nodes, path)
	f.record("remove %s", path)
	return nil
}

// RemoveAll removes path and everything below it; it does not enter a
// link. A missing path is not an error.
func (f *FS) RemoveAll(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.FailRemove[path]; err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	for p := range f.nodes {
		if p == path || ospath.Within(f.goos, path, p) {
			delete(f.nodes, p)
		}
	}
	f.record("removeall %s", path)
	return nil
}

func (f *FS) ReadFile(path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[path]
	if !ok {
		return nil, NotExist("open", path)
	}
	return append([]byte(nil), n.data...), nil
}

// put replaces path, a file in an existing directory, with data.
func (f *FS) put(op, path string, data []byte) error {
	if p, ok := f.nodes[ospath.Dir(f.goos, path)]; !ok || !p.dir {
		return NotExist(op, path)
	}
	if n, ok := f.nodes[path]; ok && n.dir {
		return &fs.PathError{Op: op, Path: path, Err: errors.New("is a directory")}
	}
	f.nodes[path] = &node{data: append([]byte(nil), data...)}
	return nil
}

func (f *FS) WriteFile(path string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.put("open", path, data); err != nil {
		return err
	}
	f.record("write %s", path)
	return nil
}

func (f *FS) CopyFile(src, dst string) error { return f.copy("copy", src, dst) }

// CopyPrivate is CopyFile, recorded as "copy private S -> D".
func (f *FS) CopyPrivate(src, dst string) error { return f.copy("copy private", src, dst) }

func (f *FS) copy(op, src, dst string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[src]
	if !ok {
		return NotExist("open", src)
	}
	if err := f.put("open", dst, n.data); err != nil {
		return err
	}
	f.record("%s %s -> %s", op, src, dst)
	return nil
}

func (f *FS) Rename(from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[from]
	if !ok {
		return NotExist("rename", from)
	}
	if n.dir {
		return &fs.PathError{Op: "rename", Path: from, Err: errors.New("renaming a directory is not modelled")}
	}
	if err := f.put("rename", to, n.data); err != nil {
		return err
	}
	delete(f.nodes, from)
	f.record("rename %s -> %s", from, to)
	return nil
}

func (f *FS) SHA256(path string) (string, error) {
	data, err := f.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:]), nil
}

func (f *FS) Tail(path string, offset int64) ([]byte, int64, error) {
	data, err := f.ReadFile(path)
	if err != nil {
		return nil, offset, err
	}
	if int64(len(data)) < offset {
		offset = 0
	}
	if int64(len(data))-offset > hostfs.MaxTail {
		data = data[:offset+hostfs.MaxTail]
	}
	return data[offset:], offset + int64(len(data[offset:])), nil
}
