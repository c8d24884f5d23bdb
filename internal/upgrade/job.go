package upgrade

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// Jobs carries out the steps of a NodeUpgradeJob on this node, in the
// order the cloud's state machine sends them: Init (fetch and verify the
// package), Checking, BackingUp, Upgrading, and RollingBack. Steps that
// take long report later through Send, so that edgehub, which hands the
// cloud's messages to the executors one at a time, is never held up. The
// upgrade itself is driven by a process of its own (`edgecore.exe upgrade
// --resume --journal <id>`), because it stops and starts the service this
// process is; the journal's outcome is reported by whichever edgecore runs
// afterwards (Node.Watch).
type Jobs struct {
	Env Env
	// Watch starts following the journal, in the background, until its
	// outcome is reported (go Node.Watch).
	Watch func()
	// ConfigFile and Executable are this node's configuration and binary;
	// Service the service it runs as.
	ConfigFile string
	Executable string
	Service    string
	Facts      Facts
	// InService reports whether this process runs as the Windows service.
	InService func() (bool, error)
	// Fetch copies at most limit bytes of a file from the repository
	// (Fetcher.Fetch).
	Fetch func(ctx context.Context, loc, dst string, limit int64) error
	// Context is the node's lifetime: a step in the background ends with
	// it. nil is a context that never ends.
	Context func() context.Context
	// FreeDisk is the space left on the volume of a directory.
	FreeDisk func(dir string) (uint64, error)
	// CheckItems runs the cloud's check items other than "disk" (cpu,
	// mem) and returns the failed ones with their reason.
	CheckItems func(items []string) map[string]string
	Send       func(Job, Report)
	Logf       func(format string, args ...any)

	mu   sync.Mutex
	busy map[string]bool
}

// Request is one step of a NodeUpgradeJob for this node.
type Request struct {
	Job Job
	// Version is the job's spec.version.
	Version string
	// Digest is the job's image digest (spec.imageDigestGatter.value),
	// used as the package's SHA-256 when set.
	Digest string
	// RequireConfirmation is the job's spec.requireConfirmation.
	RequireConfirmation bool
}

// async runs a long step in the background and reports its result; a
// step already running for the same task and event is not started twice
// (the cloud sends a step again when it hears nothing).
func (js *Jobs) async(req Request, event string, f func(ctx context.Context) error) {
	key := req.Job.TaskID + "/" + event
	js.mu.Lock()
	if js.busy == nil {
		js.busy = map[string]bool{}
	}
	if js.busy[key] {
		js.mu.Unlock()
		return
	}
	js.busy[key] = true
	js.mu.Unlock()
	ctx := context.Background()
	if js.Context != nil {
		ctx = js.Context()
	}
	go func() {
		err := f(ctx)
		js.mu.Lock()
		delete(js.busy, key)
		js.mu.Unlock()
		js.Send(req.Job, reportErr(event, err))
	}()
}

func reportErr(event string, err error) Report {
	if err != nil {
		return Report{Event: event, Reason: err.Error()}
	}
	return Report{Event: event, Success: true}
}

// checkVersion keeps the job's version usable as a directory name.
func checkVersion(v string) error {
	if err := release.CheckVersion("version", v); err != nil {
		return fmt.Errorf("the NodeUpgradeJob's %w: set spec.version to the release to install", err)
	}
	return nil
}

// Init starts fetching and verifying the package, or reports at once that
// the node runs the version already. It returns the immediate report, or
// false when the report comes later.
func (js *Jobs) Init(req Request) (Report, bool) {
	if req.RequireConfirmation {
		return Report{Event: "Init", Reason: "requireConfirmation is not supported by edgecore for Windows in operations/v1alpha1 NodeUpgradeJobs: create the job as operations/v1alpha2 (cloudcore v1.23's default), whose confirmation `edgecore.exe upgrade confirm` gives, or without requireConfirmation"}, true
	}
	if err := checkVersion(req.Version); err != nil {
		return Report{Event: "Init", Reason: err.Error()}, true
	}
	if req.Version == js.Env.Version {
		return Report{Event: "Upgrade", Success: true, Reason: "edgecore " + req.Version + " runs already"}, true
	}
	js.async(req, "Init", func(ctx context.Context) error {
		_, err := js.fetch(ctx, req)
		return err
	})
	return Report{}, false
}

// Stage fetches and verifies the package of req.Version now, for callers
// that wait for the outcome (the Check action of a v1alpha2
// NodeUpgradeJob, which runs on a goroutine of its own).
func (js *Jobs) Stage(ctx context.Context, req Request) error {
	if err := checkVersion(req.Version); err != nil {
		return err
	}
	_, err := js.fetch(ctx, req)
	return err
}

// fetch gets the package of req.Version from the repository, checks its
// digest (the job's, else the SHA256SUMS beside it) and stages it.
func (js *Jobs) fetch(ctx context.Context, req Request) (st *Staged, err error) {
	e := js.Env
	s, err := LoadSettings(e, js.ConfigFile)
	if err != nil {
		return nil, err
	}
	loc := s.Location(req.Version)
	dir := e.Paths.Staging(req.Version)
	if err := e.FS.MkdirAll(dir); err != nil {
		return nil, err
	}
	name := baseName(e.GOOS, loc)
	if name == "" || name == "." {
		name = "package.zip"
	}
	zip := ospath.Join(e.GOOS, dir, name)
	sumsPath := ospath.Join(e.GOOS, dir, release.SumsFile)
	// A refused package leaves nothing it fetched behind; stagePackage
	// removes what it unpacked.
	defer func() {
		if err != nil {
			e.FS.Remove(zip)
			e.FS.Remove(sumsPath)
		}
	}()
	js.Logf("NodeUpgradeJob %s: fetching %s", req.Job.TaskID, redact.URL(loc))
	if err := js.Fetch(ctx, loc, zip, release.MaxPackageBytes); err != nil {
		return nil, err
	}
	digest := req.Digest
	if digest == "" {
		sumsLoc := sumsBeside(e.GOOS, loc)
		if err := js.Fetch(ctx, sumsLoc, sumsPath, MaxSumsBytes); err != nil {
			return nil, fmt.Errorf("the job gives no digest (spec.imageDigestGatter.value) and %w: publish SHA256SUMS beside the packages, or set the digest", err)
		}
		data, err := e.FS.ReadFile(sumsPath)
		if err != nil {
			return nil, err
		}
		if digest, err = release.SumFor(data, name); err != nil {
			return nil, fmt.Errorf("%s: %w", redact.URL(sumsLoc), err)
		}
	}
	accept := func(m release.Manifest) error {
		if m.Version != req.Version && m.KubeEdge != req.Version {
			return fmt.Errorf("%s holds edgecore %s (KubeEdge %s), not the %s the job asks for: check the repository in %s",
				redact.URL(loc), m.Version, m.KubeEdge, req.Version, SettingsPath(e.GOOS, js.ConfigFile))
		}
		return nil
	}
	st, err = stagePackage(e, zip, digest, release.Target{OS: e.GOOS, Arch: js.Facts.Arch, Installed: e.Version}, accept, io.Discard)
	if err != nil {
		return nil, err
	}
	// The next steps find it by the job's version, which may be the
	// KubeEdge version the package is built from.
	if st.Manifest.Version != req.Version {
		if err := e.FS.CopyFile(ospath.Join(e.GOOS, e.Paths.Staging(st.Manifest.Version), stagedFile), ospath.Join(e.GOOS, dir, stagedFile)); err != nil {
			return nil, err
		}
	}
	js.Logf("NodeUpgradeJob %s: %s verified and staged as %s", req.Job.TaskID, redact.URL(loc), st.Binary)
	return st, nil
}

// Check answers the Checking step: this process must be the service (an
// upgrade restarts the service), no other upgrade may be in progress, the
// package must still be staged, the disk must hold a backup, and the
// job's check items must pass.
func (js *Jobs) Check(req Request, items []string) Report {
	e := js.Env
	var failed []string
	if err := js.RunsAsService("the upgrade"); err != nil {
		failed = append(failed, err.Error())
	}
	if j, err := loadJournal(e); err != nil {
		failed = append(failed, err.Error())
	} else if j != nil && !j.Done() {
		failed = append(failed, fmt.Sprintf("an %s from %s to %s is in progress (phase %s)", j.Kind, j.From, j.To, j.Phase))
	}
	if _, err := loadStaged(e, req.Version); err != nil {
		failed = append(failed, err.Error())
	}
	rest := make([]string, 0, len(items))
	disk := false
	for _, it := range items {
		if it == "disk" {
			disk = true
			continue
		}
		rest = append(rest, it)
	}
	if err := js.checkDisk(); err != nil && (disk || !strings.Contains(err.Error(), "cannot tell")) {
		failed = append(failed, err.Error())
	}
	if len(rest) > 0 && js.CheckItems != nil {
		bad := js.CheckItems(rest)
		keys := make([]string, 0, len(bad))
		for k := range bad {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			failed = append(failed, k+": "+bad[k])
		}
	}
	if len(failed) > 0 {
		return Report{Event: "Check", Reason: strings.Join(failed, "; ")}
	}
	return Report{Event: "Check", Success: true}
}

// RunsAsService refuses a process that is not the service: an upgrade or
// a configuration update (what, for the reason) restarts the service, so a
// job can change only the service's process. It costs nothing, so a job's
// Check asks it first: a node that cannot take the job says why at once,
// rather than after a download, or by asking for upgrade settings it
// would still refuse with.
func (js *Jobs) RunsAsService(what string) error {
	ok, err := js.InService()
	switch {
	case err != nil:
		return fmt.Errorf("cannot tell whether edgecore runs as the Windows service %q (%v): %s restarts the service; run edgecore as the service (`edgecore.exe service install`)", js.Service, err, what)
	case !ok:
		return fmt.Errorf("edgecore does not run as the Windows service %q: %s restarts the service; install it with `edgecore.exe service install`", js.Service, what)
	}
	return nil
}

// checkDisk wants room for a backup of the binary and the database, twice
// over for the staged copies and the database's growth.
func (js *Jobs) checkDisk() error {
	e := js.Env
	if js.FreeDisk == nil {
		return fmt.Errorf("free disk space: cannot tell on this system")
	}
	var need uint64
	for _, p := range []string{js.Executable, js.dataSource()} {
		if info, err := e.FS.Stat(p); err == nil {
			need += uint64(info.Size())
		}
	}
	need = 2*need + 64<<20
	free, err := js.FreeDisk(e.Paths.StateDir)
	if err != nil {
		return fmt.Errorf("free disk space on the volume of %s: cannot tell (%v)", e.Paths.StateDir, err)
	}
	if free < need {
		return fmt.Errorf("disk: %d MiB free on the volume of %s, the backup and upgrade need %d MiB: free some space", free>>20, e.Paths.StateDir, need>>20)
	}
	return nil
}

func (js *Jobs) dataSource() string {
	ds, err := js.Facts.DataSource(js.ConfigFile)
	if err != nil {
		return ""
	}
	return ds
}

// installed is this node as the service runs it: the binary and the
// configuration from the service's command line, and the version of this
// process, which is that binary.
func (js *Jobs) installed() (Installed, error) {
	f := js.Facts
	f.VersionOf = func(string) (string, error) { return js.Env.Version, nil }
	return FindInstalled(js.Env, f, js.Service)
}

// Backup answers the BackingUp step: a backup of the running version,
// taken while it runs. The upgrade's driver takes it again once the
// service has stopped, which is the copy a rollback restores; this one
// finds a full disk or a missing right before anything is stopped.
func (js *Jobs) Backup(req Request) (Report, bool) {
	js.async(req, "Backup", func(context.Context) error { return js.TakeBackup() })
	return Report{}, false
}

// TakeBackup backs up the running version now (see Backup).
func (js *Jobs) TakeBackup() error {
	in, err := js.installed()
	if err != nil {
		return err
	}
	e := js.Env
	j := newJournal(e, KindUpgrade, in, 0)
	j.Backup = e.Paths.Backup(e.Version)
	_, err = backup(e, j, e.Version, io.Discard)
	return err
}

// Upgrade answers the Upgrading step: it writes the journal of the
// upgrade, reserved for the process it then starts from the backed-up
// binary to drive it, and watches the journal to report the outcome.
func (js *Jobs) Upgrade(req Request) (Report, bool) {
	e := js.Env
	fail := func(err error) (Report, bool) { return Report{Event: "Upgrade", Reason: err.Error()}, true }
	if err := checkVersion(req.Version); err != nil {
		return fail(err)
	}
	st, err := loadStaged(e, req.Version)
	if err != nil {
		return fail(err)
	}
	s, err := LoadSettings(e, js.ConfigFile)
	if err != nil {
		return fail(err)
	}
	in, err := js.installed()
	if err != nil {
		return fail(err)
	}
	rs, note, err := planRuntime(e, js.Facts, in, st)
	if err != nil {
		return fail(err)
	}
	if note != "" {
		js.Logf("NodeUpgradeJob %s: container runtime: %s", req.Job.TaskID, note)
	}
	j := newJournal(e, KindUpgrade, in, s.Timeout())
	j.To, j.Backup, j.Staged, j.StagedSHA256 = st.Manifest.Version, e.Paths.Backup(e.Version), st.Binary, st.SHA256
	j.Runtime = rs
	return js.handOver(req, j, "Upgrade")
}

// Rollback answers the RollingBack step: it restores the backup the last
// upgrade made (or the newest other one), driven like Upgrade.
func (js *Jobs) Rollback(req Request) (Report, bool) {
	e := js.Env
	in, err := js.installed()
	if err != nil {
		return Report{Event: "Rollback", Reason: err.Error()}, true
	}
	dir, b, err := chooseBackup(e, e.Version, "")
	if err != nil {
		return Report{Event: "Rollback", Reason: err.Error()}, true
	}
	timeout := DefaultTimeout
	if s, err := LoadSettings(e, js.ConfigFile); err == nil {
		timeout = s.Timeout()
	}
	rs, note, err := rollbackRuntime(e, js.Facts, in, dir, b)
	if err != nil {
		return Report{Event: "Rollback", Reason: err.Error()}, true
	}
	if note != "" {
		js.Logf("NodeUpgradeJob %s: container runtime: %s", req.Job.TaskID, note)
	}
	j := newJournal(e, KindRollback, in, timeout)
	j.To, j.Backup, j.Runtime = b.Version, dir, rs
	return js.handOver(req, j, "Rollback")
}

// handOver writes j, reserved for a driver about to start, starts that
// driver and watches the journal for the report.
func (js *Jobs) handOver(req Request, j *Journal, event string) (Report, bool) {
	e := js.Env
	fail := func(err error) (Report, bool) { return Report{Event: event, Reason: err.Error()}, true }
	if prev, err := loadJournal(e); err != nil {
		return fail(err)
	} else if prev != nil && !prev.Done() {
		return fail(fmt.Errorf("an %s from %s to %s is in progress (phase %s)", prev.Kind, prev.From, prev.To, prev.Phase))
	}
	verb := "cloud " + string(j.Kind)
	if steps.CrashPoints {
		steps.Boundary(verb, "before the journal is written")
	}
	job := req.Job
	j.Job = &job
	j.Phase = PhasePlanned
	// PID 0: reserved for the driver being started, which no other
	// edgecore takes over while the reservation is fresh.
	j.Driver = Driver{Heartbeat: e.Clock.Now().UTC()}
	if err := saveJournal(e, j); err != nil {
		return fail(err)
	}
	if steps.CrashPoints {
		steps.Boundary(verb, "journal reserved for its driver")
	}
	// Started from a complete backup, the driver does not hold the
	// binary it replaces, which can then be replaced in one rename.
	exe := js.Executable
	if _, err := readBackup(e, j.Backup); err == nil {
		exe = ospath.Join(e.GOOS, j.Backup, config.ExecutableName(e.GOOS))
	}
	pid, err := e.Spawn(exe, []string{"upgrade", "--resume", "--journal", j.ID}, e.Paths.LogFile)
	if err != nil {
		// No driver will come: the journal ends here, reported now.
		j.Phase, j.Outcome, j.Reason = PhaseDone, OutcomeAborted, err.Error()
		j.Job.Reported = true
		saveJournal(e, j)
		return fail(fmt.Errorf("start %s to carry out the %s: %w", exe, j.Kind, err))
	}
	js.Logf("NodeUpgradeJob %s: %s from %s to %s handed to %s (process %d), which logs to %s", req.Job.TaskID, j.Kind, j.From, j.To, exe, pid, e.Paths.LogFile)
	if steps.CrashPoints {
		steps.Boundary(verb, "driver started")
	}
	js.Watch()
	return Report{}, false
}
