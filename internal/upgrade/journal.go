package upgrade

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Kind is what a journal carries out.
type Kind string

const (
	KindUpgrade  Kind = "upgrade"
	KindRollback Kind = "rollback"
)

// Phase is the step a journal is at. A phase is written before its step
// begins, so it means "this step may be done in part": what a driver that
// takes the journal over does for each phase is decided by resumeAction.
type Phase string

const (
	// PhasePlanned: checked and staged; nothing on the host changed.
	PhasePlanned Phase = "planned"
	// PhaseStop: stopping the service before anything is replaced.
	PhaseStop Phase = "stop"
	// PhaseBackup: copying the binary, configuration and database.
	PhaseBackup Phase = "backup"
	// PhaseSwap: replacing the binary; the backup is complete.
	PhaseSwap Phase = "swap"
	// PhaseStart: the new binary is in place; starting the service and
	// waiting for the health gate.
	PhaseStart Phase = "start"
	// PhaseRollbackStop, PhaseRestore and PhaseRollbackStart undo an
	// upgrade (or carry out a rollback): stop the service, put the backup
	// back, start the service.
	PhaseRollbackStop  Phase = "rollback-stop"
	PhaseRestore       Phase = "rollback-restore"
	PhaseRollbackStart Phase = "rollback-start"
	// PhaseDone: finished; Outcome says how.
	PhaseDone Phase = "done"
)

// Outcome is how a finished journal ended.
type Outcome string

const (
	// OutcomeSuccess: the upgrade passed the health gate, or the rollback
	// runs the restored version.
	OutcomeSuccess Outcome = "success"
	// OutcomeRolledBack: the upgrade failed and the version before it runs
	// again with its configuration and database.
	OutcomeRolledBack Outcome = "rolled-back"
	// OutcomeAborted: the upgrade stopped before the binary was replaced;
	// the version before it runs.
	OutcomeAborted Outcome = "aborted"
	// OutcomeFailed: putting the previous version back failed too; the
	// reason says what is left to do.
	OutcomeFailed Outcome = "failed"
)

// journalFormat is the journal's layout version: an edgecore that finds a
// newer one (written by a later release) leaves it alone rather than
// misread it. A journal that also replaces the container runtime is
// format 2, so that a release which would roll back edgecore and leave
// the new runtime in place does not take it over; any other stays 1,
// which every release carries out.
const (
	journalFormat          = 2
	journalFormatNoRuntime = 1
)

// Journal is the record of one upgrade or rollback.
type Journal struct {
	Format int    `json:"format"`
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`
	Phase  Phase  `json:"phase"`
	// From is the version installed when it began; To the version it
	// installs (for a rollback, the backup's).
	From string `json:"from"`
	To   string `json:"to"`
	// Service is the service name; Executable, ConfigFile and DataSource
	// are the files it runs with, which are backed up and replaced.
	Service    string `json:"service"`
	Executable string `json:"executable"`
	ConfigFile string `json:"configFile"`
	DataSource string `json:"dataSource"`
	// Backup is the directory restored when the upgrade fails (for a
	// rollback, the one restored).
	Backup string `json:"backup"`
	// Staged is the verified new binary and StagedSHA256 its checksum,
	// checked again right before it replaces the old one.
	Staged       string `json:"staged,omitempty"`
	StagedSHA256 string `json:"stagedSHA256,omitempty"`
	// StagedConfig, when set, is the configuration the new binary runs
	// with (a takeover's, see Adopt), put in place with the binary and
	// checked against StagedConfigSHA256 first; the backup's copy of the
	// old configuration goes back on a rollback.
	StagedConfig       string `json:"stagedConfig,omitempty"`
	StagedConfigSHA256 string `json:"stagedConfigSHA256,omitempty"`
	// Retire are files moved aside (to <file>.retired) once the new
	// binary and configuration are in place, so that the new binary
	// applies for new ones (a takeover's certificate rotation): removed
	// when the upgrade succeeds, put back when it is rolled back.
	Retire []string `json:"retire,omitempty"`
	// Old is where the running binary was renamed to when it could not be
	// replaced in place.
	Old string `json:"old,omitempty"`
	// Image is the complete binary the service's command line names
	// while the running binary is renamed away and the new one renamed
	// in (the backup's copy), "" when it names Executable. Whoever
	// carries the journal on points the service back at Executable once
	// a whole binary is there.
	Image string `json:"image,omitempty"`
	// Timeout bounds the health gate.
	Timeout Duration `json:"timeout"`
	// GateStart is when the service was started with the new (or
	// restored) binary: health records older than it are stale.
	GateStart time.Time `json:"gateStart,omitempty"`
	Created   time.Time `json:"created"`
	Driver    Driver    `json:"driver"`
	Outcome   Outcome   `json:"outcome,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	// Runtime is the container runtime join installed that the upgrade
	// replaces too (or the rollback restores); nil when it is left alone.
	Runtime *RuntimeSwap `json:"runtime,omitempty"`
	// Job is the NodeUpgradeJob task this journal carries out, if it came
	// from the cloud: whichever edgecore runs when it is done reports it.
	Job *Job `json:"job,omitempty"`
}

// Driver is the process carrying a journal out, and when it last said it
// was alive.
type Driver struct {
	// PID 0 with a fresh Heartbeat reserves the journal for a process
	// that is being started.
	PID       int       `json:"pid"`
	Heartbeat time.Time `json:"heartbeat"`
}

// Job names a NodeUpgradeJob task on this node.
type Job struct {
	TaskID   string `json:"taskID"`
	TaskType string `json:"taskType"`
	Node     string `json:"node"`
	// Reported is set once the outcome was sent to the cloud.
	Reported bool `json:"reported,omitempty"`
	// From and To are the versions in the job's own terms, KubeEdge
	// versions: what the node reported when the job came, and the job's
	// spec.version. The cloud shows the outcome's versions beside
	// spec.version, so they are reported in these terms rather than as
	// this project's release versions; empty when the job named none
	// (a rollback step).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// Duration is a time.Duration written as "3m0s".
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// Done reports whether the journal has finished.
func (j *Journal) Done() bool { return j.Phase == PhaseDone }

// loadJournal reads the journal; (nil, nil) when there is none.
func loadJournal(e Env) (*Journal, error) {
	data, err := e.FS.ReadFile(e.Paths.Journal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the upgrade journal %s: %w", e.Paths.Journal, err)
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("the upgrade journal %s is damaged (%v): if no upgrade is running, check that %s runs the version you want, then delete the journal",
			e.Paths.Journal, err, "the edgecore service")
	}
	if j.Format > journalFormat {
		return nil, fmt.Errorf("the upgrade journal %s was written by a later edgecore (format %d): finish it with that version's edgecore.exe (upgrade or rollback)",
			e.Paths.Journal, j.Format)
	}
	if err := checkJournalPaths(e, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// checkJournalPaths refuses a journal that names a file outside the
// node's own directories. Whoever carries a journal on acts on what it
// names as SYSTEM: the node starts the backup's binary to finish it, a
// rollback copies the backup's files over the executable and the
// configuration, and the service is pointed at the executable. edgecore
// writes only paths of the node's layout and of the service's command
// line, into a directory join restricts to SYSTEM and Administrators; a
// journal that names anything else was written by someone or something
// else, and nothing is run or copied from it. The database (dataSource),
// which a rollback overwrites or removes with its SQLite journals, may lie
// anywhere the configuration says: it must be the one the service's
// configuration names, or the one the node's index of backups says the
// journal's backup was made of. The files a takeover moves aside
// (retire) lie in the KubeEdge directory.
func checkJournalPaths(e Env, j *Journal) error {
	refuse := func(field, value, where string) error {
		if value == "" {
			value = `""`
		}
		return fmt.Errorf("the upgrade journal %s: %s is %s, which is not %s: edgecore runs and copies nothing a journal names outside the node's own directories; "+
			"fix: find out who wrote %s (only edgecore's upgrade and rollback commands and NodeUpgradeJobs do), then delete it",
			e.Paths.Journal, field, value, where, e.Paths.Journal)
	}
	if !strings.EqualFold(j.Service, e.Service) {
		return refuse("service", j.Service, fmt.Sprintf("the node's service %q", e.Service))
	}
	within := func(field, value string, required bool, dirs ...string) error {
		if value == "" && !required {
			return nil
		}
		for _, d := range dirs {
			if ospath.Within(e.GOOS, d, value) {
				return nil
			}
		}
		return refuse(field, value, "within "+strings.Join(dirs, " or "))
	}
	if err := within("backup", j.Backup, true, e.Paths.BackupRoot); err != nil {
		return err
	}
	if err := within("image", j.Image, false, e.Paths.BackupRoot); err != nil {
		return err
	}
	if err := within("staged", j.Staged, false, e.Paths.StateDir); err != nil {
		return err
	}
	if err := within("stagedConfig", j.StagedConfig, false, e.Paths.StateDir); err != nil {
		return err
	}
	if j.Runtime != nil {
		if err := checkRuntimeSwap(e, j.Runtime); err != nil {
			return fmt.Errorf("the upgrade journal %s: %v: edgecore copies nothing a journal names outside the runtime join installs; fix: find out who wrote %s, then delete it",
				e.Paths.Journal, err, e.Paths.Journal)
		}
	}
	exe, configFile, err := serviceFiles(e)
	if err != nil {
		return fmt.Errorf("the upgrade journal %s cannot be checked against the service %q: %w; nothing is run or copied from it until it can",
			e.Paths.Journal, e.Service, err)
	}
	home := ospath.Dir(e.GOOS, exe)
	if err := within("executable", j.Executable, true, home); err != nil {
		return err
	}
	if err := within("old", j.Old, false, home); err != nil {
		return err
	}
	if err := checkRetire(e, j.Retire); err != nil {
		return fmt.Errorf("the upgrade journal %s: retire: %v", e.Paths.Journal, err)
	}
	if !(configFile != "" && ospath.Same(e.GOOS, j.ConfigFile, configFile)) {
		if err := within("configFile", j.ConfigFile, true, e.Paths.KubeEdgeDir, home); err != nil {
			return err
		}
	}
	return checkDataSource(e, j, configFile, refuse)
}

// checkDataSource accepts the journal's database when the configuration
// the service runs with names it, or the node's index says the journal's
// backup was made of it.
func checkDataSource(e Env, j *Journal, configFile string, refuse func(field, value, where string) error) error {
	var known []string
	if configFile != "" && e.ConfigDataSource != nil {
		if ds, err := e.ConfigDataSource(configFile); err == nil && ds != "" {
			known = append(known, ds)
		}
	}
	if ix, err := loadIndex(e); err == nil {
		if en := ix.entry(e, j.Backup); en != nil && en.DataSource != "" {
			known = append(known, en.DataSource)
		}
	}
	for _, k := range known {
		if ospath.IsAbs(e.GOOS, j.DataSource) && ospath.Same(e.GOOS, k, j.DataSource) {
			return nil
		}
	}
	return refuse("dataSource", j.DataSource, "the database the service's configuration or the node's index of backups names ("+strings.Join(known, ", ")+")")
}

// serviceFiles are the binary the node's service runs and the
// configuration it runs with ("" when its command line names none), from
// the service manager. While an upgrade swaps the binary the service
// names the backup's copy of it (placeBinary); the binary that copy
// stands in for is the one the backup's description says it was copied
// from.
func serviceFiles(e Env) (exe, configFile string, err error) {
	st, err := e.Services.Query(e.Service)
	if err != nil {
		return "", "", err
	}
	if !st.Installed {
		return "", "", fmt.Errorf("the service %q is not installed", e.Service)
	}
	argv, err := service.SplitCommandLine(st.CommandLine)
	if err != nil {
		return "", "", err
	}
	exe = argv[0]
	configFile, _ = configFlag(argv[1:])
	if !ospath.Within(e.GOOS, e.Paths.BackupRoot, exe) {
		return exe, configFile, nil
	}
	info := ospath.Join(e.GOOS, ospath.Dir(e.GOOS, exe), backupInfoFile)
	data, err := e.FS.ReadFile(info)
	if err != nil {
		return "", "", fmt.Errorf("the service runs %s, a backup's copy, and that backup's description cannot tell which binary it stands in for: %w", exe, err)
	}
	var b BackupInfo
	if err := json.Unmarshal(data, &b); err != nil || !ospath.IsAbs(e.GOOS, b.Executable) {
		return "", "", fmt.Errorf("the service runs %s, a backup's copy, and %s does not say which binary it stands in for (%v)", exe, info, err)
	}
	return b.Executable, configFile, nil
}

// saveJournal writes j durably: the phase it names must survive a power
// cut that comes right after.
func saveJournal(e Env, j *Journal) error {
	// A node a release before the index upgraded trusts the backup its
	// last journal names (loadIndex): the index is written with it
	// before another journal takes that one's place.
	if _, err := e.FS.ReadFile(e.Paths.BackupIndex); isNotExist(err) {
		if ix, err := loadIndex(e); err == nil && len(ix.Backups) > 0 {
			if err := saveIndex(e, ix); err != nil {
				return err
			}
		}
	}
	j.Format = journalFormat
	if j.Runtime == nil {
		j.Format = journalFormatNoRuntime
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := e.FS.MkdirAll(e.Paths.StateDir); err != nil {
		return fmt.Errorf("create %s: %w", e.Paths.StateDir, err)
	}
	if err := e.FS.WriteFile(e.Paths.Journal, data); err != nil {
		return fmt.Errorf("write the upgrade journal %s: %w", e.Paths.Journal, err)
	}
	return nil
}

// driverAlive reports whether another process is carrying j out: it
// beat recently and (when its ID is known) still runs.
func driverAlive(e Env, j *Journal) bool {
	d := j.Driver
	if d.PID == e.PID && d.PID != 0 {
		return false
	}
	if e.Clock.Now().Sub(d.Heartbeat) >= staleAfter {
		return false
	}
	return d.PID == 0 || e.Alive == nil || e.Alive(d.PID)
}

// Health is what the edgecore the service runs says about itself while an
// upgrade is in progress.
type Health struct {
	// Journal is the ID of the journal in progress it was written for.
	Journal string    `json:"journal"`
	PID     int       `json:"pid"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// HubConnected: edgehub is connected to cloudcore.
	HubConnected bool `json:"hubConnected"`
	// NodeReady: the kubelet's last node status had Ready true, and the
	// cloud accepted it.
	NodeReady bool `json:"nodeReady"`
}

func loadHealth(e Env) (*Health, error) {
	data, err := e.FS.ReadFile(e.Paths.Health)
	if err != nil {
		return nil, err
	}
	var h Health
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, err
	}
	return &h, nil
}
