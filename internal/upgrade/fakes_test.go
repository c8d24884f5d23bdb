package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// powerCut is what the fakes panic with when the test cuts the power
// before an operation.
type powerCut struct{ op string }

// ops counts the operations that change the host (file writes, renames,
// removals, service starts and stops) and cuts the power before the
// one numbered cutAt.
type ops struct {
	n     int
	cutAt int
	log   []string
}

func (o *ops) do(op string) {
	o.n++
	if o.cutAt > 0 && o.n == o.cutAt {
		panic(powerCut{op})
	}
	o.log = append(o.log, op)
}

// fakeFS is a Windows file system: names compare without case, a file a
// running process was started from can be renamed but not replaced or
// removed, and every write is whole or not at all (as the real FS makes
// them by writing beside and renaming).
type fakeFS struct {
	ops   *ops
	files map[string][]byte
	dirs  map[string]bool
	// inUse are the binaries the service's process was started from;
	// pinned the one the test's own command runs from.
	inUse  map[string]bool
	pinned map[string]bool
	// shims are the programs running containers' shims were started
	// from: they outlive containerd, as runhcs shims do.
	shims map[string]bool
	// containerd is the program containerd's service process runs.
	containerd map[string]bool
	// fail makes an operation fail: op is "write", "copy", "rename",
	// "remove", "removeall".
	fail func(op, path string) error
	// mtime is when each directory last changed (created, or an entry
	// in it written, renamed or removed), by now.
	mtime map[string]time.Time
	now   func() time.Time
	// private are the files written by CopyPrivate, with the file each
	// was last copied from.
	private map[string]string
}

func newFakeFS(o *ops) *fakeFS {
	return &fakeFS{ops: o, files: map[string][]byte{}, dirs: map[string]bool{}, inUse: map[string]bool{}, pinned: map[string]bool{}, shims: map[string]bool{}, containerd: map[string]bool{},
		mtime: map[string]time.Time{}, now: func() time.Time { return time.Time{} }}
}

func key(p string) string { return strings.ToLower(ospath.Clean(ospath.Windows, p)) }

var errInUse = errors.New("Access is denied (the file is in use by a running process)")

func notExist(op, p string) error { return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist} }

func (f *fakeFS) busy(p string) bool {
	return f.inUse[key(p)] || f.pinned[key(p)] || f.shims[key(p)] || f.containerd[key(p)]
}

func (f *fakeFS) check(op, p string) error {
	if f.fail != nil {
		return f.fail(op, p)
	}
	return nil
}

func (f *fakeFS) mkParents(p string) {
	f.MkdirAll(ospath.Dir(ospath.Windows, p))
	f.touchParent(p)
}

// touchParent records that an entry of p's directory changed.
func (f *fakeFS) touchParent(p string) {
	f.mtime[key(ospath.Dir(ospath.Windows, p))] = f.now()
}

func (f *fakeFS) put(p string, data []byte) {
	f.mkParents(p)
	f.files[key(p)] = append([]byte(nil), data...)
}

func (f *fakeFS) get(p string) (string, bool) {
	d, ok := f.files[key(p)]
	return string(d), ok
}

func (f *fakeFS) ReadFile(p string) ([]byte, error) {
	d, ok := f.files[key(p)]
	if !ok {
		return nil, notExist("open", p)
	}
	return append([]byte(nil), d...), nil
}

func (f *fakeFS) WriteFile(p string, data []byte) error {
	f.ops.do("write " + p + journalNote(p, data))
	if err := f.check("write", p); err != nil {
		return err
	}
	if f.busy(p) {
		return errInUse
	}
	if !f.dirs[key(ospath.Dir(ospath.Windows, p))] {
		return notExist("write", p)
	}
	f.files[key(p)] = append([]byte(nil), data...)
	f.touchParent(p)
	return nil
}

// journalNote is what a write of the journal records beside its name:
// the phase, and the standby image and renamed binary the swap depends
// on.
func journalNote(p string, data []byte) string {
	if !strings.HasSuffix(key(p), `\journal.json`) {
		return ""
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return " (not a journal: " + err.Error() + ")"
	}
	return fmt.Sprintf(" (phase %s, image %q, old %q)", j.Phase, j.Image, j.Old)
}

func (f *fakeFS) CopyFile(src, dst string) error {
	f.ops.do("copy " + src + " -> " + dst)
	if err := f.check("copy", dst); err != nil {
		return err
	}
	d, ok := f.files[key(src)]
	if !ok {
		return notExist("open", src)
	}
	if f.busy(dst) {
		return errInUse
	}
	if !f.dirs[key(ospath.Dir(ospath.Windows, dst))] {
		return notExist("create", dst)
	}
	f.files[key(dst)] = append([]byte(nil), d...)
	f.touchParent(dst)
	return nil
}

// CopyPrivate is CopyFile, remembering that dst was written for SYSTEM
// and Administrators only, from src.
func (f *fakeFS) CopyPrivate(src, dst string) error {
	if err := f.CopyFile(src, dst); err != nil {
		return err
	}
	if f.private == nil {
		f.private = map[string]string{}
	}
	f.private[key(dst)] = src
	return nil
}

func (f *fakeFS) Rename(from, to string) error {
	f.ops.do("rename " + from + " -> " + to)
	if err := f.check("rename", from); err != nil {
		return err
	}
	d, ok := f.files[key(from)]
	if !ok {
		return notExist("rename", from)
	}
	if f.busy(to) {
		return errInUse
	}
	delete(f.files, key(from))
	f.files[key(to)] = d
	f.touchParent(from)
	f.touchParent(to)
	for _, m := range []map[string]bool{f.inUse, f.pinned, f.shims, f.containerd} {
		if m[key(from)] {
			delete(m, key(from))
			m[key(to)] = true
		}
	}
	return nil
}

func (f *fakeFS) Remove(p string) error {
	f.ops.do("remove " + p)
	if err := f.check("remove", p); err != nil {
		return err
	}
	if _, ok := f.files[key(p)]; !ok {
		return notExist("remove", p)
	}
	if f.busy(p) {
		return errInUse
	}
	delete(f.files, key(p))
	f.touchParent(p)
	return nil
}

// RemoveAll removes what it can, as Windows does: a file in use stays,
// and so do the directories above it.
func (f *fakeFS) RemoveAll(p string) error {
	f.ops.do("removeall " + p)
	if err := f.check("removeall", p); err != nil {
		return err
	}
	k := key(p)
	below := func(name string) bool { return name == k || strings.HasPrefix(name, k+`\`) }
	var err error
	for name := range f.files {
		if below(name) {
			if f.busy(name) {
				err = errInUse
				continue
			}
			delete(f.files, name)
		}
	}
	if err != nil {
		return err
	}
	for name := range f.dirs {
		if below(name) {
			delete(f.dirs, name)
			delete(f.mtime, name)
		}
	}
	f.touchParent(p)
	return nil
}

type fakeInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return i.size }
func (i fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (i fakeInfo) ModTime() time.Time { return i.mod }
func (i fakeInfo) IsDir() bool        { return i.dir }
func (i fakeInfo) Sys() any           { return nil }

func (f *fakeFS) Stat(p string) (fs.FileInfo, error) {
	if d, ok := f.files[key(p)]; ok {
		return fakeInfo{name: p, size: int64(len(d))}, nil
	}
	if f.dirs[key(p)] {
		return fakeInfo{name: p, dir: true, mod: f.mtime[key(p)]}, nil
	}
	return nil, notExist("stat", p)
}

func (f *fakeFS) MkdirAll(p string) error {
	for _, a := range ospath.Ancestors(ospath.Windows, p) {
		if !f.dirs[key(a)] {
			f.dirs[key(a)] = true
			f.mtime[key(a)] = f.now()
			f.touchParent(a)
		}
	}
	return nil
}

func (f *fakeFS) SHA256(p string) (string, error) {
	d, ok := f.files[key(p)]
	if !ok {
		return "", notExist("open", p)
	}
	return sum(string(d)), nil
}

func (f *fakeFS) ReadDir(p string) ([]fs.DirEntry, error) {
	k := key(p)
	if !f.dirs[k] {
		return nil, notExist("readdir", p)
	}
	seen := map[string]bool{}
	for name := range f.files {
		if d := key(ospath.Dir(ospath.Windows, name)); d == k {
			seen[name[len(k)+1:]] = true
		}
	}
	for name := range f.dirs {
		if name != k && key(ospath.Dir(ospath.Windows, name)) == k {
			seen[name[len(k)+1:]] = true
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	entries := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		info, err := f.Stat(ospath.Join(ospath.Windows, p, n))
		if err != nil {
			return nil, err
		}
		i := info.(fakeInfo)
		i.name = n
		entries = append(entries, fs.FileInfoToDirEntry(i))
	}
	return entries, nil
}

// Lstat is Stat: this file system has no links.
func (f *fakeFS) Lstat(p string) (fs.FileInfo, error) { return f.Stat(p) }

// Tail reads from offset on, from the start when the file is shorter, as
// the host's does.
func (f *fakeFS) Tail(p string, offset int64) ([]byte, int64, error) {
	d, err := f.ReadFile(p)
	if err != nil {
		return nil, offset, err
	}
	if int64(len(d)) < offset {
		offset = 0
	}
	return d[offset:], int64(len(d)), nil
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// fakeClock moves only when something sleeps; each sleep lets the fake
// service's processes run.
type fakeClock struct {
	now    time.Time
	onTick []func()
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.now = c.now.Add(d)
	for _, f := range c.onTick {
		f()
	}
	return ctx.Err()
}

// binary is how a fake binary behaves when the service runs it: the
// binaries are told apart by their content.
type program struct {
	version string
	// exitsAtOnce: the process ends before the service reports running.
	exitsAtOnce bool
	// crashAfter: the process ends this long after it started.
	crashAfter time.Duration
	// connects: the hub connects and the node turns Ready after
	// readyAfter (only edgecores of this project write health records).
	connects   bool
	readyAfter time.Duration
	// writesDB is what the version does to the database when it starts.
	writesDB string
}

// fakeServices is the service manager with one service whose binary is
// read from the fake file system when it starts; the process it starts
// writes its health record as the real node does (Node.tick).
type fakeServices struct {
	// Services is nil: an upgrade never installs or deletes a service,
	// so Install and Uninstall, left to it, panic and fail the test.
	deps.Services
	ops      *ops
	fs       *fakeFS
	clock    *fakeClock
	env      func(pid int, version string) Env
	name     string
	exe      string
	config   string
	db       string
	binaries map[string]program
	st       service.Status
	nextPID  uint32
	started  time.Time
	running  program
	node     *Node
	// restarts counts the recovery restarts the service manager made.
	restarts int
	// queryErr makes Query fail.
	queryErr error
	// badConfig is a configuration content the binaries exit on at once.
	badConfig string
	log       []string
	spawned   [][]string
	// rt is containerd's service, when the host has it.
	rt *fakeRuntime
}

func (s *fakeServices) Query(name string) (service.Status, error) {
	if s.queryErr != nil {
		return service.Status{Name: name}, s.queryErr
	}
	if s.rt != nil && name == s.rt.name {
		return s.rt.st, nil
	}
	if name != s.name {
		return service.Status{Name: name}, nil
	}
	st := s.st
	st.Installed = true
	st.CommandLine, _ = service.CommandLine(s.exe, []string{"--config", s.config})
	return st, nil
}

func (s *fakeServices) Start(name string) error {
	if s.rt != nil && name == s.rt.name {
		return s.rt.start()
	}
	s.ops.do("start service")
	if s.st.State == service.Running {
		return nil
	}
	content, ok := s.fs.get(s.exe)
	if !ok {
		s.log = append(s.log, "start failed: no binary")
		return fmt.Errorf("start service %q: The system cannot find the file specified", name)
	}
	b, known := s.binaries[content]
	s.nextPID++
	if cfg, _ := s.fs.get(s.config); s.badConfig != "" && cfg == s.badConfig {
		b.exitsAtOnce = true
	}
	if !known || b.exitsAtOnce {
		s.st = service.Status{State: service.Stopped, Win32ExitCode: 1066, ServiceExitCode: 1}
		s.log = append(s.log, "start failed: "+content+" exits at once")
		return fmt.Errorf("start service %q: it stopped while starting (exit code 1)", name)
	}
	s.launch(b)
	return nil
}

func (s *fakeServices) launch(b program) {
	s.st = service.Status{State: service.Running, ProcessID: s.nextPID}
	s.fs.inUse[key(s.exe)] = true
	// SQLite holds the database open without letting it be replaced.
	s.fs.inUse[key(s.db)] = true
	s.running = b
	s.started = s.clock.now
	s.log = append(s.log, fmt.Sprintf("running %s as process %d", b.version, s.nextPID))
	if b.writesDB != "" {
		s.fs.files[key(s.db)] = []byte(b.writesDB)
		s.fs.files[key(s.db+"-journal")] = []byte("hot journal of " + b.version)
	}
	if b.connects {
		pid, started := int(s.nextPID), s.clock.now
		s.node = &Node{
			Env: s.env(pid, b.version), Started: started, Executable: s.exe,
			Connected: func() bool { return s.clock.now.Sub(started) >= b.readyAfter },
			Ready:     func() bool { return s.clock.now.Sub(started) >= b.readyAfter },
			Send:      func(Job, Report) {},
			Logf:      func(string, ...any) {},
		}
	} else {
		s.node = nil
	}
}

// Installed is what Query says, as deps.WindowsServices has it.
func (s *fakeServices) Installed(name string) (bool, error) {
	st, err := s.Query(name)
	return st.Installed, err
}

// SetCommandLine changes the binary the service manager starts, as one
// registry write.
func (s *fakeServices) SetCommandLine(name, line string) error {
	s.ops.do("set service command line " + line)
	argv, err := service.SplitCommandLine(line)
	if err != nil {
		return err
	}
	if name != s.name || len(argv) != 3 || argv[1] != "--config" || argv[2] != s.config {
		return fmt.Errorf("set command line of %q to %q: arguments changed", name, line)
	}
	s.exe = argv[0]
	return nil
}

func (s *fakeServices) Stop(name string) error {
	if s.rt != nil && name == s.rt.name {
		return s.rt.stop()
	}
	s.ops.do("stop service")
	if s.st.State == service.Running {
		s.exit(service.Status{State: service.Stopped})
	}
	return nil
}

func (s *fakeServices) exit(st service.Status) {
	// The service's process was the only user of inUse, wherever its
	// binary has been renamed to since.
	s.fs.inUse = map[string]bool{}
	s.st = st
	s.node = nil
}

// tick lets the running process do its work as time passes: crash when
// its time has come (and be restarted by the recovery actions 5 s later),
// and write its health record.
func (s *fakeServices) tick() {
	if s.st.State == service.Running && s.running.crashAfter > 0 && s.clock.now.Sub(s.started) >= s.running.crashAfter {
		s.exit(service.Status{State: service.Stopped, Win32ExitCode: 1066, ServiceExitCode: 2})
		s.restarts++
		s.nextPID++
		s.launch(s.running)
		return
	}
	if s.st.State == service.Running && s.node != nil {
		s.node.tick()
	}
}

// boot is what the host does after a power cut: no process survives, and
// the service manager starts the automatic service from whatever binary
// is in place.
func (s *fakeServices) boot() error {
	s.fs.inUse = map[string]bool{}
	s.st = service.Status{State: service.Stopped}
	s.node = nil
	if s.rt != nil {
		// No container survives a power cut; edgecore's service
		// depends on containerd's, which starts first, and does not
		// start when containerd does not.
		s.fs.shims = map[string]bool{}
		s.rt.st = service.Status{Name: s.rt.name, Installed: true, State: service.Stopped}
		if err := s.rt.start(); err != nil {
			return err
		}
	}
	return s.Start(s.name)
}

// host is a Windows host with edgecore v0.1.0 installed as a running
// service, in paths with spaces, and v0.2.0 staged.
type host struct {
	ops    *ops
	fs     *fakeFS
	clock  *fakeClock
	svc    *fakeServices
	alive  map[int]bool
	paths  Paths
	layout config.Layout
	exe    string
	config string
	db     string
	staged string
}

const (
	oldBin    = "edgecore v0.1.0 binary"
	newBin    = "edgecore v0.2.0 binary"
	badBin    = "edgecore v0.2.0 that exits at once"
	oldConfig = "config of v0.1.0"
	oldDB     = "database of v0.1.0"
)

func newHost(newBinary string) *host {
	o := &ops{}
	f := newFakeFS(o)
	c := &fakeClock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	f.now = c.Now
	layout := config.NewLayout(config.Host{GOOS: config.Windows, SystemDrive: "C:", ProgramFiles: `C:\Program Files`})
	h := &host{
		ops: o, fs: f, clock: c, alive: map[int]bool{},
		paths:  NewPaths(layout),
		layout: layout,
		exe:    `C:\Program Files\edge core\edgecore.exe`,
		config: `C:\etc\kubeedge\config files\edgecore.yaml`,
		db:     `C:\var\lib\kube edge\edgecore.db`,
	}
	h.staged = ospath.Join(ospath.Windows, h.paths.Staging("v0.2.0"), "edgecore.exe")
	f.put(h.exe, []byte(oldBin))
	f.put(h.config, []byte(oldConfig))
	f.put(h.db, []byte(oldDB))
	f.put(h.staged, []byte(newBinary))
	f.MkdirAll(h.paths.LogFile[:strings.LastIndexByte(h.paths.LogFile, '\\')])
	h.svc = &fakeServices{
		ops: o, fs: f, clock: c, name: "edgecore", exe: h.exe, config: h.config, db: h.db,
		binaries: map[string]program{
			oldBin: {version: "v0.1.0", connects: true, readyAfter: 3 * time.Second},
			newBin: {version: "v0.2.0", connects: true, readyAfter: 4 * time.Second, writesDB: "database of v0.2.0"},
			badBin: {version: "v0.2.0", exitsAtOnce: true},
		},
	}
	h.svc.env = func(pid int, v string) Env { return h.env(pid, v) }
	c.onTick = append(c.onTick, h.svc.tick)
	h.svc.nextPID = 4000
	h.svc.launch(h.svc.binaries[oldBin])
	// The running v0.1.0 does not write DB changes the test could see.
	return h
}

// env is the host as process pid of version sees it.
func (h *host) env(pid int, version string) Env {
	var rt RuntimeEnv
	if h.svc.rt != nil {
		rt = RuntimeEnv{Layout: h.layout, CRI: h.svc.rt.cri}
	}
	return Env{
		GOOS: config.Windows, Paths: h.paths, FS: h.fs, Services: h.svc, Service: "edgecore", Clock: h.clock, Runtime: rt,
		ConfigDataSource: func(string) (string, error) { return h.db, nil },
		Restrict:         func(dir string) error { h.ops.do("restrict " + dir); return nil },
		Spawn: func(exe string, args []string, log string) (int, error) {
			h.svc.spawned = append(h.svc.spawned, append([]string{exe}, args...))
			return 7000 + len(h.svc.spawned), nil
		},
		Alive:   func(p int) bool { return h.alive[p] },
		PID:     pid,
		Version: version,
	}
}

func (h *host) facts() Facts {
	return Facts{
		DataSource:  func(string) (string, error) { return h.db, nil },
		CRIEndpoint: func(string) (string, error) { return criPipe, nil },
		VersionOf: func(exe string) (string, error) {
			content, _ := h.fs.get(exe)
			if b, ok := h.svc.binaries[content]; ok {
				return b.version, nil
			}
			return "", errors.New("not an edgecore")
		},
		Arch: "amd64",
	}
}

// plannedUpgrade is the journal the upgrade command writes for v0.2.0.
func (h *host) plannedUpgrade(e Env) *Journal {
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db, Version: "v0.1.0"}
	j := newJournal(e, KindUpgrade, in, DefaultTimeout)
	j.To, j.Backup, j.Staged, j.StagedSHA256 = "v0.2.0", e.Paths.Backup("v0.1.0"), h.staged, sum(h.stagedContent())
	return j
}

func (h *host) stagedContent() string {
	c, _ := h.fs.get(h.staged)
	return c
}
