package upgrade

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// backupInfoFile describes a backup. It is written last, so a directory
// without it is a backup that was interrupted and is never restored.
const backupInfoFile = "backup.json"

// Names of the files in a backup directory.
const (
	backupConfig = "edgecore.yaml"
	backupDB     = "edgecore.db"
)

// BackupInfo is a complete backup: what was copied from where, with the
// checksum of each copy.
type BackupInfo struct {
	Version    string    `json:"version"`
	Created    time.Time `json:"created"`
	Executable string    `json:"executable"`
	ConfigFile string    `json:"configFile"`
	DataSource string    `json:"dataSource"`
	// Files maps each file of the backup directory to its SHA-256. The
	// database is absent when the node had none yet.
	Files map[string]string `json:"files"`
	// Runtime maps each container runtime file of the backup (under
	// runtime\) to where it was installed, when the upgrade that made
	// the backup replaced the runtime join installed.
	Runtime map[string]string `json:"runtime,omitempty"`
}

// dbSidecars are the files SQLite keeps beside a database. A restored
// database must not meet a journal of the version that replaced it:
// SQLite would replay it into the restored file.
func dbSidecars(db string) []string {
	return []string{db + "-journal", db + "-wal", db + "-shm"}
}

// backupFiles are the (source, name in the backup) pairs of a journal.
func backupFiles(goos string, j *Journal) [][2]string {
	files := [][2]string{
		{j.Executable, config.ExecutableName(goos)},
		{j.ConfigFile, backupConfig},
		{j.DataSource, backupDB},
	}
	if j.Runtime != nil && j.Kind == KindUpgrade {
		for _, f := range j.Runtime.Files {
			files = append(files, [2]string{f.Target, f.Backup})
		}
	}
	return files
}

// backup copies the binary, configuration and database of j into
// j.Backup and gives the backup directory the ACL of the KubeEdge
// directory. A file already there with the same checksum is kept: the
// process running the upgrade may have been started from that very copy,
// which Windows would not let anyone overwrite.
func backup(e Env, j *Journal, version string, out io.Writer) (*BackupInfo, error) {
	dir := j.Backup
	if err := e.FS.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	info := ospath.Join(e.GOOS, dir, backupInfoFile)
	// From here on the directory is an incomplete backup until the new
	// description is written.
	if err := e.FS.Remove(info); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w", info, err)
	}
	b := &BackupInfo{Version: version, Created: e.Clock.Now().UTC(), Executable: j.Executable,
		ConfigFile: j.ConfigFile, DataSource: j.DataSource, Files: map[string]string{}}
	// The node's index lists the backup before anything is copied (as
	// being made), and pins its description once it is complete.
	ix, err := loadIndex(e)
	if err != nil {
		return nil, err
	}
	en := indexEntry{Name: ospath.Base(e.GOOS, dir), Version: version, Created: b.Created, DataSource: j.DataSource}
	ix.put(e, en)
	if err := saveIndex(e, ix); err != nil {
		return nil, err
	}
	if j.Runtime != nil && j.Kind == KindUpgrade {
		// The runtime's folder as it was, beside the node's files.
		if err := e.FS.MkdirAll(ospath.Join(e.GOOS, dir, runtimeBackupDir)); err != nil {
			return nil, fmt.Errorf("create %s: %w", ospath.Join(e.GOOS, dir, runtimeBackupDir), err)
		}
		b.Runtime = map[string]string{}
		for _, f := range j.Runtime.Files {
			b.Runtime[f.Backup] = f.Target
		}
	}
	for _, f := range backupFiles(e.GOOS, j) {
		src, name := f[0], f[1]
		dst := ospath.Join(e.GOOS, dir, name)
		sum, err := e.FS.SHA256(src)
		if errors.Is(err, fs.ErrNotExist) && name == backupDB {
			// A node that never ran has no database; restoring this
			// backup removes the one the new version made.
			if err := e.FS.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("remove %s: %w", dst, err)
			}
			fmt.Fprintf(out, "%s does not exist yet; nothing to back up\n", src)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("back up %s: %w", src, err)
		}
		if have, err := e.FS.SHA256(dst); err == nil && have == sum {
			fmt.Fprintf(out, "%s: already in the backup\n", src)
		} else {
			if err := e.FS.CopyFile(src, dst); err != nil {
				return nil, fmt.Errorf("copy %s to %s: %w", src, dst, err)
			}
			if have, err := e.FS.SHA256(dst); err != nil || have != sum {
				return nil, fmt.Errorf("the copy %s differs from %s (%v): check the disk, then try again", dst, src, err)
			}
			fmt.Fprintf(out, "copied %s\n", src)
		}
		b.Files[name] = sum
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := e.FS.WriteFile(info, data); err != nil {
		return nil, fmt.Errorf("write %s: %w", info, err)
	}
	en.Info = digest(data)
	ix.put(e, en)
	if err := saveIndex(e, ix); err != nil {
		return nil, err
	}
	if err := e.Restrict(e.Paths.BackupRoot); err != nil {
		return nil, fmt.Errorf("restrict %s to SYSTEM and Administrators: %w", e.Paths.BackupRoot, err)
	}
	fmt.Fprintf(out, "backup of %s complete in %s (SYSTEM and Administrators only)\n", version, dir)
	return b, nil
}

// readBackup reads a backup the node's index lists, checks its
// description against the index and every file against the description,
// so that a rollback never starts from a damaged backup or from one the
// node did not make. The backup's time is the index's.
func readBackup(e Env, dir string) (*BackupInfo, error) {
	ix, err := loadIndex(e)
	if err != nil {
		return nil, err
	}
	return readIndexed(e, ix, dir)
}

func readIndexed(e Env, ix *backupIndex, dir string) (*BackupInfo, error) {
	en := ix.entry(e, dir)
	if en == nil {
		return nil, notIndexed(e, dir)
	}
	if en.Config {
		return nil, fmt.Errorf("%s is a configuration job's backup of the configuration only, not a version to go back to", dir)
	}
	path := ospath.Join(e.GOOS, dir, backupInfoFile)
	if en.Info == "" {
		return nil, fmt.Errorf("%s has no complete backup (it was interrupted before its %s was written)", dir, backupInfoFile)
	}
	data, err := e.FS.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no complete backup (no %s)", dir, backupInfoFile)
	}
	if err != nil {
		return nil, err
	}
	if digest(data) != en.Info {
		return nil, fmt.Errorf("%s is not the description the node wrote (its index %s has another checksum): the backup is damaged or was replaced, and is not restored",
			path, e.Paths.BackupIndex)
	}
	var b BackupInfo
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", path, err)
	}
	b.Created = en.Created
	exe := config.ExecutableName(e.GOOS)
	if b.Files[exe] == "" || b.Files[backupConfig] == "" {
		return nil, fmt.Errorf("%s lists no %s or %s", path, exe, backupConfig)
	}
	for name, want := range b.Files {
		got, err := e.FS.SHA256(ospath.Join(e.GOOS, dir, name))
		if err != nil {
			return nil, fmt.Errorf("backup file %s: %w", name, err)
		}
		if got != want {
			return nil, fmt.Errorf("backup file %s in %s does not match %s: the backup is damaged", name, dir, backupInfoFile)
		}
	}
	return &b, nil
}

// restore puts a verified backup back: the binary (see placeBinary), the
// configuration and the database. The service is stopped. Each step
// replaces a file whole, so running restore again after an interruption
// finishes it.
func (d *driver) restore(b *BackupInfo) error {
	e, j := d.e, d.j
	dir := j.Backup
	// Nothing is deleted or overwritten but what the backup was made
	// of: the backup's description is pinned by the node's index, the
	// journal's paths are not.
	for _, p := range []struct{ field, journal, backup string }{
		{"executable", j.Executable, b.Executable}, {"configFile", j.ConfigFile, b.ConfigFile}, {"dataSource", j.DataSource, b.DataSource},
	} {
		if !ospath.Same(e.GOOS, p.journal, p.backup) {
			return fmt.Errorf("the upgrade journal's %s is %s, but the backup %s was made of %s: nothing is restored over a file the backup did not come from; "+
				"fix: restore the backup's files by hand where they belong, then delete %s", p.field, p.journal, dir, p.backup, e.Paths.Journal)
		}
	}
	if err := d.placeBinary(ospath.Join(e.GOOS, dir, config.ExecutableName(e.GOOS)), b.Files[config.ExecutableName(e.GOOS)]); err != nil {
		return err
	}
	d.printf("restored %s\n", j.Executable)
	if err := e.FS.CopyPrivate(ospath.Join(e.GOOS, dir, backupConfig), j.ConfigFile); err != nil {
		return fmt.Errorf("restore %s: %w", j.ConfigFile, err)
	}
	d.printf("restored %s\n", j.ConfigFile)
	for _, s := range dbSidecars(j.DataSource) {
		if err := e.FS.Remove(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s before restoring the database: %w", s, err)
		}
	}
	if b.Files[backupDB] == "" {
		if err := e.FS.Remove(j.DataSource); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s, which the backup did not have: %w", j.DataSource, err)
		}
		d.printf("removed %s (there was none before)\n", j.DataSource)
	} else {
		if err := e.FS.CopyFile(ospath.Join(e.GOOS, dir, backupDB), j.DataSource); err != nil {
			return fmt.Errorf("restore %s: %w", j.DataSource, err)
		}
		d.printf("restored %s\n", j.DataSource)
	}
	if err := d.unretire(); err != nil {
		return err
	}
	return d.restoreRuntimeOf(b)
}

// restoreRuntimeOf restores the container runtime when the journal
// carries it.
func (d *driver) restoreRuntimeOf(b *BackupInfo) error {
	if d.j.Runtime == nil {
		return nil
	}
	return d.restoreRuntime(b)
}

// placeBinary puts the file src (whose checksum is sum) at the journal's
// executable, so that at every instant the binary the service would
// start, after a power cut too, is a whole one.
//
// A stopped service's binary is replaced in one rename (MoveFileEx with
// MOVEFILE_REPLACE_EXISTING, atomic within an NTFS volume, and
// MOVEFILE_WRITE_THROUGH, so that it is on disk before the journal moves
// on): the path holds the old binary, then the new one. A binary that is running (the upgrade
// command itself may have been started from it) cannot be replaced on
// Windows, only renamed, and between renaming it away and renaming the
// new one in its path would name nothing: the service manager starts
// only the path in the service's command line, so after a power cut there
// nothing of edgecore would run to recover. Before that window the
// service's command line is pointed, in one write, at the backup's copy of
// the old binary (complete and verified: the backup is written before the
// swap), and recorded in the journal; after it, at the executable again.
// A power cut at any point leaves the service naming a whole binary: the
// executable (old or new), or the backup's copy, which runs the old
// version and lets its start finish the journal (Node starts the helper;
// restore calls placeBinary, which points the service back).
func (d *driver) placeBinary(src, sum string) error {
	e, j := d.e, d.j
	exe := j.Executable
	tmp := exe + ".new"
	if err := e.FS.CopyFile(src, tmp); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, tmp, err)
	}
	if got, err := e.FS.SHA256(tmp); err != nil || got != sum {
		e.FS.Remove(tmp)
		return fmt.Errorf("%s does not match the checksum it was verified with (%v): it changed on disk; start again", src, err)
	}
	replaceErr := e.FS.Rename(tmp, exe)
	if replaceErr == nil {
		return d.serviceImage("")
	}
	standby := ospath.Join(e.GOOS, j.Backup, config.ExecutableName(e.GOOS))
	if _, err := readBackup(e, j.Backup); err != nil {
		e.FS.Remove(tmp)
		return fmt.Errorf("replace %s: %v; it is in use, and the service cannot be pointed at the backup's copy while it is renamed away: %w", exe, replaceErr, err)
	}
	if err := d.serviceImage(standby); err != nil {
		e.FS.Remove(tmp)
		return fmt.Errorf("replace %s: %v; it is in use, and %w", exe, replaceErr, err)
	}
	old := exe + ".old"
	if err := e.FS.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// An earlier .old still runs; pick a name of its own.
		old = fmt.Sprintf("%s.old-%d", exe, e.Clock.Now().Unix())
	}
	j.Old = old
	if err := d.save(); err != nil {
		return err
	}
	if err := e.FS.Rename(exe, old); err != nil {
		e.FS.Remove(tmp)
		return fmt.Errorf("replace %s: %v; rename it away: %w", exe, replaceErr, err)
	}
	if err := e.FS.Rename(tmp, exe); err != nil {
		if back := e.FS.Rename(old, exe); back != nil {
			return fmt.Errorf("move %s into place: %v; and moving %s back failed: %w", tmp, err, old, back)
		}
		return fmt.Errorf("move %s into place: %w", tmp, err)
	}
	d.printf("%s was in use: the running binary was renamed to %s (meanwhile the service named %s)\n", exe, old, standby)
	return d.serviceImage("")
}

// serviceImage points the service's command line at image, or back at
// the journal's executable when image is "", keeping its arguments. The
// journal records it first, so that whoever carries the journal on after
// a power cut points it back. Nothing is written when the service already
// names it.
func (d *driver) serviceImage(image string) error {
	e, j := d.e, d.j
	want := image
	if want == "" {
		want = j.Executable
	}
	st, err := e.Services.Query(j.Service)
	if err != nil {
		return fmt.Errorf("reading the command line of the service %s: %w", j.Service, err)
	}
	argv, err := service.SplitCommandLine(st.CommandLine)
	if err != nil {
		return fmt.Errorf("the service %s: %w", j.Service, err)
	}
	if image != "" && j.Image != image {
		j.Image = image
		if err := d.save(); err != nil {
			return err
		}
	}
	if !ospath.Same(e.GOOS, argv[0], want) {
		line, err := service.CommandLine(want, argv[1:])
		if err != nil {
			return fmt.Errorf("the service %s: %w", j.Service, err)
		}
		if err := e.Services.SetCommandLine(j.Service, line); err != nil {
			return fmt.Errorf("pointing the service %s at %s: %w", j.Service, want, err)
		}
		d.printf("the service %s now starts %s\n", j.Service, want)
	}
	if image == "" && j.Image != "" {
		j.Image = ""
		return d.save()
	}
	return nil
}

// cleanup removes what the swap left beside the binary. A renamed binary
// that still runs (this command) cannot be removed; the next upgrade does.
func (d *driver) cleanup() {
	e, j := d.e, d.j
	for _, p := range []string{j.Executable + ".new", j.Executable + ".old", j.Old} {
		if p != "" {
			e.FS.Remove(p)
		}
	}
	if j.Runtime != nil {
		for _, p := range j.Runtime.Old {
			e.FS.Remove(p)
		}
	}
	// A shim of a container that still runs keeps its renamed program,
	// and the removal fails; a later upgrade or rollback removes it once
	// the container is gone. Only in the runtime join installed: the
	// operator's folder is not touched.
	if _, ok, err := installedRuntime(e); err == nil && ok {
		for _, f := range runtimeinstall.Files {
			e.FS.Remove(f.Target(e.Runtime.Layout) + ".old")
		}
	}
}
