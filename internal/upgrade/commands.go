package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Facts are how an upgrade learns about the installed edgecore what the
// service manager does not say.
type Facts struct {
	// DataSource reads the database path from a configuration file.
	DataSource func(configFile string) (string, error)
	// CRIEndpoint reads the node's CRI endpoint from a configuration
	// file, which an upgrade that replaces the container runtime asks
	// before edgecore starts.
	CRIEndpoint func(configFile string) (string, error)
	// VersionOf asks an edgecore binary for its version.
	VersionOf func(exe string) (string, error)
	// Arch is the host's architecture in Go's names.
	Arch string
	// Pods reads the pods the cloud gave the node from its database.
	Pods func(dataSource string) ([]corev1.Pod, error)
}

// Installed is the edgecore the service runs.
type Installed struct {
	Service    string
	Executable string
	ConfigFile string
	DataSource string
	// Version is "" when the binary would not say (VersionErr).
	Version    string
	VersionErr error
}

// FindInstalled reads the service's command line for the binary and the
// configuration it runs with, the configuration for the database, and the
// binary for its version.
func FindInstalled(e Env, f Facts, name string) (Installed, error) {
	in := Installed{Service: name}
	st, err := e.Services.Query(name)
	if err != nil {
		return in, err
	}
	if !st.Installed {
		return in, fmt.Errorf("the service %q is not installed: upgrade and rollback replace the binary that service runs; set the node up with `edgecore.exe join` (or `edgecore.exe service install`) first", name)
	}
	argv, err := service.SplitCommandLine(st.CommandLine)
	if err != nil {
		return in, err
	}
	in.Executable = argv[0]
	cfg, ok := configFlag(argv[1:])
	if !ok {
		return in, fmt.Errorf("the service %q runs %q without --config, so its configuration is unknown: reinstall it with `edgecore.exe service install --config <file>`", name, st.CommandLine)
	}
	in.ConfigFile = cfg
	for _, p := range []struct{ what, path string }{{"binary", in.Executable}, {"configuration", in.ConfigFile}} {
		if !ospath.IsAbs(e.GOOS, p.path) {
			return in, fmt.Errorf("the service %q names its %s as %q, which is not an absolute path: reinstall it with `edgecore.exe service install`", name, p.what, p.path)
		}
	}
	if in.DataSource, err = f.DataSource(in.ConfigFile); err != nil {
		return in, err
	}
	in.Version, in.VersionErr = f.VersionOf(in.Executable)
	return in, nil
}

// Upgrade carries out `edgecore.exe upgrade --package`: it first finishes
// an upgrade an earlier process left half-done, then verifies the package
// against what the service runs, stages its binary and drives the
// upgrade, printing each step to out.
func Upgrade(ctx context.Context, out io.Writer, e Env, f Facts, o UpgradeOptions) Result {
	res := Result{Action: KindUpgrade, Status: StatusRefused}
	refuse := func(err error) Result {
		res.Reason = err.Error()
		return res
	}
	// The command has validated o; a caller that has not is held to the
	// same rules.
	if err := o.Validate(); err != nil {
		return refuse(err)
	}
	if _, _, err := finishEarlier(ctx, out, e); err != nil {
		return refuse(err)
	}
	in, err := FindInstalled(e, f, o.Service)
	if err != nil {
		return refuse(err)
	}
	res.From = in.Version
	fmt.Fprintf(out, "The service %s runs %s %s with %s\n", in.Service, in.Executable, orUnknown(in), in.ConfigFile)
	fmt.Fprintf(out, "Checking %s\n", o.Package)
	st, err := stagePackage(e, o.Package, o.SHA256, release.Target{OS: e.GOOS, Arch: f.Arch, Installed: in.Version, AllowDowngrade: o.AllowDowngrade}, nil, steps.Indented(out))
	var same *release.ErrSameVersion
	switch {
	case errors.As(err, &same):
		res.Status, res.To, res.Reason = StatusUnchanged, same.Version, same.Error()
		return res
	case err != nil:
		if in.VersionErr != nil {
			err = fmt.Errorf("%w (the installed binary did not tell its version: %v)", err, in.VersionErr)
		}
		return refuse(err)
	}
	res.To = st.Manifest.Version
	rs, note, err := planRuntime(e, f, in, st)
	if err != nil {
		return refuse(err)
	}
	if note != "" {
		fmt.Fprintf(out, "Container runtime: %s\n", note)
	}
	j := newJournal(e, KindUpgrade, in, o.Timeout)
	j.To, j.Backup, j.Staged, j.StagedSHA256 = st.Manifest.Version, e.Paths.Backup(backupName(in.Version, e)), st.Binary, st.SHA256
	j.Runtime = rs
	if in.Version == "" {
		j.From = "unknown"
	}
	r, err := Execute(ctx, out, e, j)
	if err != nil {
		return refuse(err)
	}
	return r
}

// finishEarlier completes what an earlier process left half-done (an
// upgrade or a rollback, from its journal) before a new one starts, and
// says how it ended.
func finishEarlier(ctx context.Context, out io.Writer, e Env) (Result, bool, error) {
	r, resumed, err := Resume(ctx, out, e, "")
	if err == nil && resumed {
		fmt.Fprintf(out, "The earlier %s ended: %s\n", r.Action, r.Line())
	}
	return r, resumed, err
}

// backupName is the directory name of the running version's backup; an
// installed binary that would not tell its version is backed up under the
// time of the upgrade, so that it never overwrites a real version's.
func backupName(v string, e Env) string {
	if v != "" {
		return v
	}
	return "unknown-" + e.Clock.Now().UTC().Format("20060102T150405Z")
}

func orUnknown(in Installed) string {
	if in.Version != "" {
		return in.Version
	}
	return fmt.Sprintf("(version unknown: %v)", in.VersionErr)
}

func newJournal(e Env, k Kind, in Installed, timeout time.Duration) *Journal {
	now := e.Clock.Now().UTC()
	return &Journal{
		ID: fmt.Sprintf("%s-%d", now.Format("20060102T150405.000Z"), e.PID), Kind: k,
		From: in.Version, Service: in.Service, Executable: in.Executable, ConfigFile: in.ConfigFile,
		DataSource: in.DataSource, Timeout: Duration(timeout), Created: now,
	}
}

// Rollback carries out `edgecore.exe rollback`: it puts a backup's binary,
// configuration and database back and starts the service on them.
func Rollback(ctx context.Context, out io.Writer, e Env, f Facts, o RollbackOptions) Result {
	res := Result{Action: KindRollback, Status: StatusRefused}
	refuse := func(err error) Result {
		res.Reason = err.Error()
		return res
	}
	if err := o.Validate(); err != nil {
		return refuse(err)
	}
	if r, resumed, err := finishEarlier(ctx, out, e); err != nil {
		return refuse(err)
	} else if resumed {
		if r.Action == KindUpgrade && r.Status == StatusRolledBack && o.Version == "" {
			// That was the rollback the operator asked for.
			return r
		}
	}
	in, err := FindInstalled(e, f, o.Service)
	if err != nil {
		return refuse(err)
	}
	res.From = in.Version
	dir, b, err := chooseBackup(e, in.Version, o.Version)
	if err != nil {
		return refuse(err)
	}
	res.To = b.Version
	rs, note, err := rollbackRuntime(e, f, in, dir, b)
	if err != nil {
		return refuse(err)
	}
	if note != "" {
		fmt.Fprintf(out, "Container runtime: %s\n", note)
	}
	j := newJournal(e, KindRollback, in, o.Timeout)
	if in.Version == "" {
		j.From = "unknown"
	}
	j.To, j.Backup, j.Runtime = b.Version, dir, rs
	r, err := Execute(ctx, out, e, j)
	if err != nil {
		return refuse(err)
	}
	return r
}

// chooseBackup picks the backup a rollback restores: the version given,
// else the one the last successful upgrade moved away from, else the
// newest complete backup of a version other than the running one, by the
// time the node's index of backups gives it. Only backups the index lists
// are candidates, and every candidate is verified file by file.
func chooseBackup(e Env, running, want string) (string, *BackupInfo, error) {
	ix, err := loadIndex(e)
	if err != nil {
		return "", nil, err
	}
	if want != "" {
		// A version, never a path: --to ..\..\x would restore a
		// "backup" from anywhere.
		if err := release.CheckVersion(flagVersion, want); err != nil {
			return "", nil, fmt.Errorf("%w: give the version of a backup in %s, e.g. --to v0.1.0", err, e.Paths.BackupRoot)
		}
		dir := e.Paths.Backup(want)
		b, err := readIndexed(e, ix, dir)
		if err != nil {
			return "", nil, fmt.Errorf("%s %s: %w", flagVersion, want, err)
		}
		return dir, b, nil
	}
	if j, err := loadJournal(e); err == nil && j != nil && j.Done() && j.Kind == KindUpgrade && j.Outcome == OutcomeSuccess && j.From != running {
		if b, err := readIndexed(e, ix, j.Backup); err == nil {
			return j.Backup, b, nil
		}
	}
	type cand struct {
		dir string
		b   *BackupInfo
	}
	var cands []cand
	var damaged []string
	for _, en := range ix.Backups {
		if en.Config {
			continue
		}
		dir := ospath.Join(e.GOOS, e.Paths.BackupRoot, en.Name)
		b, err := readIndexed(e, ix, dir)
		if err != nil {
			damaged = append(damaged, err.Error())
			continue
		}
		if b.Version != running {
			cands = append(cands, cand{dir, b})
		}
	}
	if len(cands) == 0 {
		msg := fmt.Sprintf("no backup of a version other than the running %s in %s", running, e.Paths.BackupRoot)
		if len(damaged) > 0 {
			msg += fmt.Sprintf(" (unusable: %v)", damaged)
		}
		if strays := unindexedDirs(e, ix); len(strays) > 0 {
			msg += fmt.Sprintf(" (not made by this node, so never restored: %s)", strings.Join(strays, ", "))
		}
		return "", nil, errors.New(msg + ": upgrade makes one; to go to another version, use `edgecore.exe upgrade --package <zip> --allow-downgrade`")
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].b.Created.After(cands[b].b.Created) })
	return cands[0].dir, cands[0].b, nil
}

// unindexedDirs are the directories in the backup root the node's index
// does not list.
func unindexedDirs(e Env, ix *backupIndex) []string {
	entries, err := e.FS.ReadDir(e.Paths.BackupRoot)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range entries {
		dir := ospath.Join(e.GOOS, e.Paths.BackupRoot, de.Name())
		if ix.entry(e, dir) == nil {
			out = append(out, dir)
		}
	}
	return out
}

// Staged is a verified package whose binary waits in the staging
// directory.
type Staged struct {
	Manifest release.Manifest `json:"manifest"`
	// Package is the zip it came from; Binary the unpacked binary and
	// SHA256 its checksum.
	Package string `json:"package"`
	Binary  string `json:"binary"`
	SHA256  string `json:"sha256"`
	// Runtime is the container runtime the package carries, nil when
	// it carries none.
	Runtime *StagedRuntime `json:"runtime,omitempty"`
}

const stagedFile = "staged.json"

// stagePackage checks the zip at path (against digest when given, then
// its own SHA256SUMS, its manifest, the target and accept) and unpacks its
// binary into the staging directory of its version. The digest is taken
// through the handle the zip is then read from (release.OpenDigest). A
// refused package leaves nothing behind: a binary it had unpacked is
// removed.
func stagePackage(e Env, path, digest string, t release.Target, accept func(release.Manifest) error, out io.Writer) (st *Staged, err error) {
	var want string
	if digest != "" {
		if want, err = release.ParseDigest(digest); err != nil {
			return nil, err
		}
	}
	p, err := release.OpenDigest(path, want)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if want != "" {
		fmt.Fprintf(out, "the zip's SHA-256 matches %s\n", want)
	}
	m := p.Manifest
	fmt.Fprintf(out, "%s: %d files match\n", release.SumsFile, len(p.Files))
	fmt.Fprintf(out, "edgecore %s for %s (KubeEdge %s)\n", m.Version, m.Platform(), m.KubeEdge)
	if accept != nil {
		if err := accept(m); err != nil {
			return nil, err
		}
	}
	if err := release.Check(m, t); err != nil {
		return nil, err
	}
	dir := e.Paths.Staging(m.Version)
	if err := e.FS.MkdirAll(dir); err != nil {
		return nil, err
	}
	if err := e.Restrict(e.Paths.StateDir); err != nil {
		return nil, fmt.Errorf("restrict %s to SYSTEM and Administrators: %w", e.Paths.StateDir, err)
	}
	bin := ospath.Join(e.GOOS, dir, m.Binary)
	stagedPath := ospath.Join(e.GOOS, dir, stagedFile)
	defer func() {
		if err != nil {
			// The binary may be half a disk's worth of what the
			// package held; an earlier staging of the same version
			// was overwritten by it, so its record goes too.
			e.FS.Remove(bin)
			e.FS.Remove(stagedPath)
		}
	}()
	if err := p.Extract(m.Binary, bin); err != nil {
		return nil, err
	}
	if err := release.CheckBinary(bin, m); err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	st = &Staged{Manifest: m, Package: path, Binary: bin, SHA256: p.Files[m.Binary]}
	if st.Runtime, err = stageRuntime(e, p, dir, out); err != nil {
		return nil, err
	}
	data, _ := json.MarshalIndent(st, "", "  ")
	if err := e.FS.WriteFile(stagedPath, data); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "staged %s\n", bin)
	return st, nil
}

// loadStaged finds the staged package of version and checks that its
// binary is unchanged.
func loadStaged(e Env, version string) (*Staged, error) {
	path := ospath.Join(e.GOOS, e.Paths.Staging(version), stagedFile)
	data, err := e.FS.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no package of %s was fetched and verified (%v)", version, err)
	}
	var st Staged
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", path, err)
	}
	if sum, err := e.FS.SHA256(st.Binary); err != nil || sum != st.SHA256 {
		return nil, fmt.Errorf("the staged binary %s changed after it was verified (%v)", st.Binary, err)
	}
	if err := st.Runtime.check(e); err != nil {
		return nil, err
	}
	return &st, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
