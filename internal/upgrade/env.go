// Package upgrade replaces the edgecore binary a Windows service runs with a
// verified release and takes it back when the new version is not healthy:
// `edgecore.exe upgrade --package`, `edgecore.exe rollback`, and the
// cloud's NodeUpgradeJob through the executors in internal/modules.
//
// Every change is preceded by a journal entry (the phase) written to disk,
// so that a process that dies half-way (a power cut, a crash, the service
// manager ending it) leaves enough for the next edgecore that starts, or
// the next upgrade or rollback command, to finish the work or undo it.
// The new version writes a health record while an upgrade is in progress;
// the driver admits it only when the service keeps running, the hub is
// connected and the node's Ready status was accepted by the cloud.
//
// Everything the package does to the host goes through Env: the tests
// run every phase, and a crash after every single file operation, against
// fakes that behave like Windows.
package upgrade

import (
	"context"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
)

// Env is the host an upgrade acts on.
type Env struct {
	// GOOS is the target OS, for its path rules.
	GOOS  string
	Paths Paths
	// FS is the file system (hostfs.OS outside tests).
	FS hostfs.FS
	// Services controls the edgecore service (the one service-manager
	// adapter, deps.Services), and Service is its name
	// (service.DefaultName): a journal is carried out only for it.
	Services deps.Services
	Service  string
	Clock    clock.Clock
	// Restrict gives a directory tree the ACL of C:\etc\kubeedge once
	// every entry in it is judged (protect.Enforce, Adopting).
	Restrict func(dir string) error
	// TrustSettings judges the upgrade settings file before it is read
	// (protect.CheckFile: who owns it, who may change it or rename a
	// folder above it), since they name where the binary that runs as
	// SYSTEM comes from, and a --config outside C:\etc\kubeedge puts
	// them in a folder the node does not restrict whole. HostEnv sets
	// it; nil, in tests about other things, judges nothing.
	TrustSettings func(path string) error
	// Spawn starts exe with args as a process of its own that outlives
	// this one (and the service), its output appended to logFile, and
	// returns its process ID.
	Spawn func(exe string, args []string, logFile string) (int, error)
	// Alive reports whether a process with this ID runs.
	Alive func(pid int) bool
	// ConfigDataSource reads the database a configuration file names,
	// from a file this build may refuse to run with (keadm's, during a
	// takeover): what a journal's dataSource is checked against.
	ConfigDataSource func(configFile string) (string, error)
	// Runtime is where the container runtime join installs lives; the
	// zero value leaves the runtime out of upgrades.
	Runtime RuntimeEnv
	// PID is this process's ID and Version this binary's version
	// (internal/version).
	PID     int
	Version string
}

// Paths are where an upgrade keeps its state: all of it under the KubeEdge
// directory, which join restricts to SYSTEM and Administrators, since the
// staged binary is run by the service as SYSTEM.
type Paths struct {
	GOOS string
	// KubeEdgeDir holds the node's configuration; BackupRoot and
	// StateDir lie in it.
	KubeEdgeDir string
	// BackupRoot holds one directory per backed-up version.
	BackupRoot string
	// StateDir holds the journal, the health record and the staged
	// packages.
	StateDir string
	// Journal records the upgrade in progress, or the last one.
	Journal string
	// BackupIndex lists the backups the node made (backupIndex): the
	// only ones it restores.
	BackupIndex string
	// Health is written by the edgecore the service runs while an
	// upgrade is in progress.
	Health string
	// Waiting is the NodeUpgradeJob that waits for the operator's
	// confirmation, and Confirmed the confirmation
	// `edgecore.exe upgrade confirm` writes for it.
	Waiting, Confirmed string
	// Unhold asks the running edgecore to release pods it holds
	// (`edgecore.exe upgrade unhold`).
	Unhold string
	// LogFile receives the output of the upgrade processes that run
	// detached from any console.
	LogFile string
	// NodeLogFile is edgecore's own log as a service, which says why a
	// new version did not become healthy.
	NodeLogFile string
}

// NewPaths places the upgrade's files in l.
func NewPaths(l config.Layout) Paths {
	g := l.GOOS
	state := l.UpgradeDir
	return Paths{
		GOOS:        g,
		KubeEdgeDir: l.KubeEdgeDir,
		BackupRoot:  l.BackupDir,
		StateDir:    state,
		Journal:     ospath.Join(g, state, "journal.json"),
		BackupIndex: ospath.Join(g, state, backupIndexFile),
		Health:      ospath.Join(g, state, "health.json"),
		Waiting:     ospath.Join(g, state, "waiting.json"),
		Confirmed:   ospath.Join(g, state, "confirmed.json"),
		Unhold:      ospath.Join(g, state, "unhold.json"),
		LogFile:     ospath.Join(g, l.LogDir, "upgrade.log"),
		NodeLogFile: l.LogFile,
	}
}

// Backup is the backup directory of version: C:\etc\kubeedge\backup\v0.1.0.
func (p Paths) Backup(version string) string { return ospath.Join(p.GOOS, p.BackupRoot, version) }

// Staging is where the package of version is verified and unpacked.
func (p Paths) Staging(version string) string { return ospath.Join(p.GOOS, p.StateDir, version) }

// Timing of an upgrade.
const (
	// DefaultTimeout bounds the health gate: the new version's start, the
	// hub connection and the node's first Ready status (seconds on a
	// healthy host, edgehub retries every few seconds), with room for a
	// slow link. A NodeUpgradeJob's timeoutSeconds must exceed it.
	DefaultTimeout = 3 * time.Minute
	// settle is how long the service must keep running, in the same
	// process, once healthy (or, after a rollback, once running): the
	// service manager restarts a crashed service after 5 s, so a crash
	// soon after start shows as a new process or a stopped service
	// within it.
	settle = 15 * time.Second
	// poll is how often the gate looks at the service and the health
	// record, and the node at the journal.
	poll = time.Second
	// progressEvery is how often a wait says what it still waits for.
	progressEvery = 15 * time.Second
	// staleAfter is how old a driver's heartbeat may get before another
	// edgecore takes its journal over. A driver beats between steps and
	// on every poll; its longest step is a service stop
	// (service.StopWaitTimeout, 45 s).
	staleAfter = 2 * time.Minute
)

// sleep waits d on the clock; it reports whether ctx ended.
func (e Env) sleep(ctx context.Context, d time.Duration) bool {
	return e.Clock.Sleep(ctx, d) != nil
}
