package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// KindConfig is a journal that replaces the node's configuration (a
// ConfigUpdateJob): the binary stays, so From and To are both the running
// version. It is driven like an upgrade, by a process of its own, since it
// restarts the service this process is: stop, back up the configuration,
// put the new one in place, start and wait for the health gate; on failure
// the backup goes back and the service starts again on it.
const KindConfig Kind = "config"

// configBackupInfo describes a configuration backup. It is not
// backupInfoFile: a backup without the binary is no version a rollback
// could restore (chooseBackup never picks it), and prune treats the
// directory as one it may remove once its journal is no longer the last.
const configBackupInfo = "config-backup.json"

// configStamp names a configuration job's backup directory and staged file.
func configStamp(e Env) string {
	return "config-" + e.Clock.Now().UTC().Format("20060102T150405.000Z")
}

// UpdateConfig answers a ConfigUpdateJob's Update action with text, the
// new configuration already judged by the caller (internal/configjob): it
// stages the text beside the journal and hands the change to a driver as
// Upgrade does. The outcome is reported by whichever edgecore runs once the
// driver is done (Node.Watch); the report it makes is configReport's.
func (js *Jobs) UpdateConfig(req Request, text []byte) (Report, bool) {
	e := js.Env
	fail := func(err error) (Report, bool) { return Report{Event: "Update", Reason: err.Error()}, true }
	in, err := js.installed()
	if err != nil {
		return fail(err)
	}
	if !ospath.Same(e.GOOS, in.ConfigFile, js.ConfigFile) {
		return fail(fmt.Errorf("the service %s runs with %s, not %s, the configuration this job was judged against: reinstall the service with `edgecore.exe service install`", js.Service, in.ConfigFile, js.ConfigFile))
	}
	timeout := DefaultTimeout
	if s, err := LoadSettings(e, js.ConfigFile); err == nil {
		timeout = s.Timeout()
	}
	j := newJournal(e, KindConfig, in, timeout)
	j.To = j.From
	stamp := configStamp(e)
	j.Backup = ospath.Join(e.GOOS, e.Paths.BackupRoot, stamp)
	j.Staged = ospath.Join(e.GOOS, e.Paths.StateDir, stamp+".yaml")
	if err := e.FS.MkdirAll(e.Paths.StateDir); err != nil {
		return fail(fmt.Errorf("create %s: %w", e.Paths.StateDir, err))
	}
	if err := e.FS.WriteFile(j.Staged, text); err != nil {
		return fail(fmt.Errorf("stage the new configuration as %s: %w", j.Staged, err))
	}
	if j.StagedSHA256, err = e.FS.SHA256(j.Staged); err != nil {
		return fail(err)
	}
	return js.handOver(req, j, "Update")
}

// The steps of a configuration update.
const configSteps = 4

// configure carries out a KindConfig journal.
func (d *driver) configure(ctx context.Context) Result {
	e, j := d.e, d.j
	fmt.Fprintf(d.out, "Updating the configuration %s of edgecore %s (service %s)\n", j.ConfigFile, j.From, j.Service)
	steps.Title(d.out, 1, configSteps, "stop the service "+j.Service)
	if err := d.phase(PhaseStop); err != nil {
		return d.abort(err.Error())
	}
	if err := e.Services.Stop(j.Service); err != nil {
		return d.abort(fmt.Sprintf("stopping the service %s: %v", j.Service, err))
	}
	d.printf("stopped\n")

	steps.Title(d.out, 2, configSteps, fmt.Sprintf("back up %s to %s", j.ConfigFile, j.Backup))
	if err := d.phase(PhaseBackup); err != nil {
		return d.abort(err.Error())
	}
	if err := backupConfigFile(e, j); err != nil {
		return d.abort(err.Error())
	}
	d.printf("backup complete (SYSTEM and Administrators only)\n")

	steps.Title(d.out, 3, configSteps, fmt.Sprintf("replace %s with the new configuration", j.ConfigFile))
	if err := d.phase(PhaseSwap); err != nil {
		return d.rollback(err.Error())
	}
	if got, err := e.FS.SHA256(j.Staged); err != nil || got != j.StagedSHA256 {
		return d.rollback(fmt.Sprintf("the staged configuration %s changed on disk since it was checked (%v)", j.Staged, err))
	}
	if err := e.FS.CopyPrivate(j.Staged, j.ConfigFile); err != nil {
		return d.rollback(fmt.Sprintf("write %s: %v", j.ConfigFile, err))
	}
	d.printf("%s replaced\n", j.ConfigFile)
	if err := d.startAndGate(ctx, 4, configSteps); err != nil {
		return d.rollback("the node did not come back with the new configuration: " + err.Error())
	}
	e.FS.Remove(j.Staged)
	return d.finish(OutcomeSuccess, "")
}

// backupConfigFile copies the configuration into j.Backup, checks the copy and
// describes it last, then gives the backups the KubeEdge directory's ACL.
func backupConfigFile(e Env, j *Journal) error {
	if err := e.FS.MkdirAll(j.Backup); err != nil {
		return fmt.Errorf("create %s: %w", j.Backup, err)
	}
	info := ospath.Join(e.GOOS, j.Backup, configBackupInfo)
	if err := e.FS.Remove(info); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", info, err)
	}
	ix, err := loadIndex(e)
	if err != nil {
		return err
	}
	en := indexEntry{Name: ospath.Base(e.GOOS, j.Backup), Version: j.From, Created: e.Clock.Now().UTC(), Config: true}
	ix.put(e, en)
	if err := saveIndex(e, ix); err != nil {
		return err
	}
	sum, err := e.FS.SHA256(j.ConfigFile)
	if err != nil {
		return fmt.Errorf("back up %s: %w", j.ConfigFile, err)
	}
	dst := ospath.Join(e.GOOS, j.Backup, backupConfig)
	if err := e.FS.CopyFile(j.ConfigFile, dst); err != nil {
		return fmt.Errorf("copy %s to %s: %w", j.ConfigFile, dst, err)
	}
	if got, err := e.FS.SHA256(dst); err != nil || got != sum {
		return fmt.Errorf("the copy %s differs from %s (%v): check the disk, then try again", dst, j.ConfigFile, err)
	}
	data, err := json.MarshalIndent(BackupInfo{Version: j.From, Created: en.Created, ConfigFile: j.ConfigFile,
		Files: map[string]string{backupConfig: sum}}, "", "  ")
	if err != nil {
		return err
	}
	if err := e.FS.WriteFile(info, data); err != nil {
		return fmt.Errorf("write %s: %w", info, err)
	}
	en.Info = digest(data)
	ix.put(e, en)
	if err := saveIndex(e, ix); err != nil {
		return err
	}
	if err := e.Restrict(e.Paths.BackupRoot); err != nil {
		return fmt.Errorf("restrict %s to SYSTEM and Administrators: %w", e.Paths.BackupRoot, err)
	}
	return nil
}

// restoreConfig puts the configuration backup of j back, after checking it
// against its description. The service is stopped.
func (d *driver) restoreConfig() error {
	e, j := d.e, d.j
	ix, err := loadIndex(e)
	if err != nil {
		return err
	}
	en := ix.entry(e, j.Backup)
	if en == nil || !en.Config {
		return notIndexed(e, j.Backup)
	}
	data, err := e.FS.ReadFile(ospath.Join(e.GOOS, j.Backup, configBackupInfo))
	if err != nil {
		return fmt.Errorf("%s holds no complete configuration backup: %w", j.Backup, err)
	}
	if digest(data) != en.Info {
		return fmt.Errorf("the description of the configuration backup in %s is not the one the node wrote (its index %s has another checksum): it is not restored", j.Backup, e.Paths.BackupIndex)
	}
	var b BackupInfo
	if err := json.Unmarshal(data, &b); err != nil || b.Files[backupConfig] == "" {
		return fmt.Errorf("the description of the configuration backup in %s is damaged (%v)", j.Backup, err)
	}
	if !ospath.Same(e.GOOS, b.ConfigFile, j.ConfigFile) {
		return fmt.Errorf("the upgrade journal's configFile is %s, but the backup %s was made of %s: it is not restored over another file", j.ConfigFile, j.Backup, b.ConfigFile)
	}
	src := ospath.Join(e.GOOS, j.Backup, backupConfig)
	if got, err := e.FS.SHA256(src); err != nil || got != b.Files[backupConfig] {
		return fmt.Errorf("the configuration backup %s does not match its description (%v): the backup is damaged", src, err)
	}
	if err := e.FS.CopyPrivate(src, j.ConfigFile); err != nil {
		return fmt.Errorf("restore %s: %w", j.ConfigFile, err)
	}
	d.printf("restored %s\n", j.ConfigFile)
	return nil
}

// configReport is the event a finished KindConfig journal reports, in the
// terms of the ConfigUpdateJob's action flow: "Update" on success, else
// "RollBack", whose success means the node runs its former configuration.
func configReport(j *Journal) Report {
	switch j.Outcome {
	case OutcomeSuccess:
		return Report{Event: "Update", Success: true}
	case OutcomeRolledBack:
		return Report{Event: "RollBack", Success: true,
			Reason: fmt.Sprintf("the new configuration was rolled back; the node runs its former configuration again: %s", j.Reason)}
	case OutcomeAborted:
		return Report{Event: "RollBack", Success: true,
			Reason: fmt.Sprintf("the configuration was not replaced; the node runs its former configuration: %s", j.Reason)}
	}
	return Report{Event: "RollBack", Reason: fmt.Sprintf("the new configuration failed and so did putting the former one back: %s", j.Reason)}
}
