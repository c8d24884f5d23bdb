package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

func binaryOf(version string) string { return "edgecore " + version + " binary" }

// stage puts a verified package of version in its staging directory, as
// the upgrade command or a NodeUpgradeJob's Init leaves it, and returns
// the staged binary.
func (h *host) stage(version string) string {
	dir := h.paths.Staging(version)
	bin := ospath.Join(ospath.Windows, dir, "edgecore.exe")
	h.fs.put(bin, []byte(binaryOf(version)))
	h.fs.put(ospath.Join(ospath.Windows, dir, stagedFile), []byte(fmt.Sprintf(`{"binary":%q,"sha256":%q}`, bin, sum(binaryOf(version)))))
	if _, ok := h.svc.binaries[binaryOf(version)]; !ok {
		h.svc.binaries[binaryOf(version)] = program{version: version, connects: true, readyAfter: 3 * time.Second}
	}
	return bin
}

// upgradeTo stages version to and upgrades the running from to it, as
// `edgecore.exe upgrade --package` run from the installed binary does.
func (h *host) upgradeTo(t *testing.T, from, to string) (Result, string) {
	t.Helper()
	e := h.env(driverPID, from)
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db, Version: from}
	staged := h.stage(to)
	j := newJournal(e, KindUpgrade, in, DefaultTimeout)
	j.To, j.Backup, j.Staged, j.StagedSHA256 = to, e.Paths.Backup(from), staged, sum(binaryOf(to))
	var out bytes.Buffer
	h.alive[driverPID] = true
	defer delete(h.alive, driverPID)
	r, err := Execute(context.Background(), &out, e, j)
	if err != nil {
		t.Fatalf("Execute: %v\n%s", err, out.String())
	}
	return r, out.String()
}

func (h *host) rollback(t *testing.T, running, to string) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	r := Rollback(context.Background(), &out, h.env(200, running), h.facts(), RollbackOptions{Version: to, Timeout: time.Minute, Service: "edgecore"})
	return r, out.String()
}

// oldBackup writes a complete backup of version as an earlier upgrade
// left it, made at created, and lists it in the node's index.
func (h *host) oldBackup(version string, created time.Time) {
	h.plantBackup(version, created)
	dir := h.paths.Backup(version)
	info, _ := h.fs.ReadFile(ospath.Join(ospath.Windows, dir, backupInfoFile))
	h.indexBackup(indexEntry{Name: version, Version: version, Created: created, DataSource: h.db, Info: digest(info)})
}

// plantBackup writes a complete-looking backup of version that says it
// was made at created, without the node's index knowing it: what another
// account could put there.
func (h *host) plantBackup(version string, created time.Time) {
	dir := h.paths.Backup(version)
	files := map[string]string{"edgecore.exe": binaryOf(version), "edgecore.yaml": "config of " + version}
	info := map[string]any{"version": version, "files": map[string]string{}, "created": created,
		"executable": h.exe, "configFile": h.config, "dataSource": h.db}
	for name, content := range files {
		h.fs.put(ospath.Join(ospath.Windows, dir, name), []byte(content))
		info["files"].(map[string]string)[name] = sum(content)
	}
	data, _ := json.Marshal(info)
	h.fs.put(ospath.Join(ospath.Windows, dir, backupInfoFile), data)
	if _, ok := h.svc.binaries[binaryOf(version)]; !ok {
		h.svc.binaries[binaryOf(version)] = program{version: version, connects: true, readyAfter: 3 * time.Second}
	}
}

// indexBackup lists en in the node's index, as backup() does.
func (h *host) indexBackup(en indexEntry) {
	var ix backupIndex
	if data, ok := h.fs.get(h.paths.BackupIndex); ok {
		json.Unmarshal([]byte(data), &ix)
	}
	ix.put(h.env(1, ""), en)
	data, _ := json.Marshal(ix)
	h.fs.put(h.paths.BackupIndex, data)
}

// interruptedBackup is a backup of version the power cut short while it
// copied the binary: listed in the index, without its description.
func (h *host) interruptedBackup(version string) {
	h.fs.put(ospath.Join(ospath.Windows, h.paths.Backup(version), "edgecore.exe"), []byte("half a binary"))
	h.indexBackup(indexEntry{Name: version, Version: version, Created: h.clock.now, DataSource: h.db})
}

// dirs lists the directories in root, as an operator's `dir` shows them.
func (h *host) dirs(root string) []string {
	entries, _ := h.fs.ReadDir(root)
	dirs := []string{}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	return dirs
}

// filesUnder lists every file below dir.
func (h *host) filesUnder(dir string) []string {
	var out []string
	for name := range h.fs.files {
		if strings.HasPrefix(name, key(dir)+`\`) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (h *host) wantBackups(t *testing.T, versions ...string) {
	t.Helper()
	if got := h.dirs(h.paths.BackupRoot); !reflect.DeepEqual(got, versions) {
		t.Errorf("backups %v, want %v", got, versions)
	}
}

// allFiles is every file on the host.
func (h *host) allFiles() []string {
	var out []string
	for name := range h.fs.files {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func TestThreeUpgradesKeepTheTwoNewestBackups(t *testing.T) {
	h := newHost(newBin)
	var outs []string
	for _, s := range [][2]string{{"v0.1.0", "v0.2.0"}, {"v0.2.0", "v0.3.0"}, {"v0.3.0", "v0.4.0"}} {
		h.clock.now = h.clock.now.Add(30 * 24 * time.Hour)
		r, out := h.upgradeTo(t, s[0], s[1])
		if r.Status != StatusSuccess {
			t.Fatalf("upgrade %s to %s: %s\n%s", s[0], s[1], r.Line(), out)
		}
		outs = append(outs, out)
		if files := h.filesUnder(h.paths.Staging(s[1])); len(files) != 0 {
			t.Errorf("after the upgrade to %s its staged package is still there: %v", s[1], files)
		}
	}
	h.wantBackups(t, "v0.2.0", "v0.3.0")
	for _, v := range []string{"v0.2.0", "v0.3.0"} {
		if _, err := readBackup(h.env(1, v), h.paths.Backup(v)); err != nil {
			t.Errorf("backup of %s: %v", v, err)
		}
	}
	if files := h.filesUnder(h.paths.Backup("v0.1.0")); len(files) != 0 {
		t.Errorf("the oldest backup left %v", files)
	}
	if got := h.dirs(h.paths.StateDir); len(got) != 0 {
		t.Errorf("staging directories left: %v", got)
	}
	wantLines(t, outs[0], `      removed staged package C:\etc\kubeedge\upgrade\v0.2.0 (v0.2.0)`)
	wantLines(t, outs[2],
		`      removed old backup C:\etc\kubeedge\backup\v0.1.0 (v0.1.0)`,
		`      removed staged package C:\etc\kubeedge\upgrade\v0.4.0 (v0.4.0)`)
	for i, out := range outs[:2] {
		if strings.Contains(out, "removed old backup") {
			t.Errorf("upgrade %d removed a backup with two or fewer:\n%s", i+1, out)
		}
	}

	// The operator can still go back, twice.
	r, out := h.rollback(t, "v0.4.0", "")
	if r.Line() != "result=success action=rollback from=v0.4.0 to=v0.3.0" {
		t.Fatalf("rollback: %s\n%s", r.Line(), out)
	}
	h.must(t, h.exe, binaryOf("v0.3.0"))
	h.wantBackups(t, "v0.2.0", "v0.3.0")
	r, out = h.rollback(t, "v0.3.0", "")
	if r.Line() != "result=success action=rollback from=v0.3.0 to=v0.2.0" {
		t.Fatalf("second rollback: %s\n%s", r.Line(), out)
	}
	h.must(t, h.exe, binaryOf("v0.2.0"))
	if h.svc.running.version != "v0.2.0" {
		t.Errorf("running %s", h.svc.running.version)
	}
}

func TestAnInterruptedBackupIsRemoved(t *testing.T) {
	h := newHost(newBin)
	// An upgrade long ago lost the power while it copied the binary.
	h.interruptedBackup("v0.0.9")
	h.clock.now = h.clock.now.Add(time.Hour)
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	h.wantBackups(t, "v0.1.0")
	if files := h.filesUnder(`C:\etc\kubeedge\backup\v0.0.9`); len(files) != 0 {
		t.Errorf("left %v", files)
	}
	wantLines(t, out, `      removed interrupted backup C:\etc\kubeedge\backup\v0.0.9 (no backup.json)`)
}

func TestBackupsAJournalNeedsAreKept(t *testing.T) {
	t.Run("journal in progress, then done", func(t *testing.T) {
		h := newHost(newBin)
		day := 24 * time.Hour
		h.oldBackup("v0.0.7", h.clock.now.Add(-3*day))
		h.oldBackup("v0.0.8", h.clock.now.Add(-2*day))
		h.oldBackup("v0.0.9", h.clock.now.Add(-day))
		h.interruptedBackup("v0.0.6")
		h.clock.now = h.clock.now.Add(time.Hour)
		// The upgrade stopped while it backed up v0.1.0: its backup is
		// incomplete, and a driver that takes the journal over needs it.
		e := h.env(driverPID, "v0.1.0")
		j := h.plannedUpgrade(e)
		j.Phase = PhaseBackup
		if err := saveJournal(e, j); err != nil {
			t.Fatal(err)
		}
		h.fs.put(`C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`, []byte(oldBin))
		before := h.allFiles()
		var out bytes.Buffer
		d := &driver{e: e, j: j, out: &out}
		d.prune()
		if after := h.allFiles(); !reflect.DeepEqual(before, after) || out.Len() != 0 {
			t.Fatalf("pruned while a journal is in progress:\nbefore %v\nafter  %v\n%s", before, after, out.String())
		}

		j.Phase, j.Outcome = PhaseDone, OutcomeAborted
		if err := saveJournal(e, j); err != nil {
			t.Fatal(err)
		}
		d.prune()
		h.wantBackups(t, "v0.0.8", "v0.0.9", "v0.1.0")
		h.must(t, `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`, oldBin)
		wantLines(t, out.String(),
			`removed old backup C:\etc\kubeedge\backup\v0.0.7 (v0.0.7)`,
			`removed interrupted backup C:\etc\kubeedge\backup\v0.0.6`,
			`removed staged package C:\etc\kubeedge\upgrade\v0.2.0`)
	})

	// An industrial PC whose clock battery is flat boots in 2000: the
	// backup the upgrade makes is the "oldest", and still the one a
	// rollback needs.
	t.Run("clock set back", func(t *testing.T) {
		h := newHost(newBin)
		h.oldBackup("v0.0.8", h.clock.now.Add(-48*time.Hour))
		h.oldBackup("v0.0.9", h.clock.now.Add(-24*time.Hour))
		h.clock.now = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
		if r.Status != StatusSuccess {
			t.Fatalf("%s\n%s", r.Line(), out)
		}
		if _, err := readBackup(h.env(1, "v0.2.0"), h.paths.Backup("v0.1.0")); err != nil {
			t.Fatalf("the backup the upgrade made is gone: %v\n%s", err, out)
		}
		if r, out := h.rollback(t, "v0.2.0", ""); r.Line() != "result=success action=rollback from=v0.2.0 to=v0.1.0" {
			t.Fatalf("rollback: %s\n%s", r.Line(), out)
		}
		h.must(t, h.exe, oldBin)
	})

	// The newer of the older backups is damaged: `rollback` skips it, so
	// the one before it is kept too, though two newer ones exist.
	t.Run("backup rollback picks", func(t *testing.T) {
		h := newHost(badBin)
		h.oldBackup("v0.0.8", h.clock.now.Add(-48*time.Hour))
		h.oldBackup("v0.0.9", h.clock.now.Add(-24*time.Hour))
		h.fs.put(`C:\etc\kubeedge\backup\v0.0.9\edgecore.exe`, []byte("truncated"))
		r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
		if r.Status != StatusRolledBack {
			t.Fatalf("%s\n%s", r.Line(), out)
		}
		if got := h.dirs(h.paths.BackupRoot); !reflect.DeepEqual(got, []string{"v0.0.8", "v0.0.9", "v0.1.0"}) {
			t.Errorf("backups %v\n%s", got, out)
		}
		if r, out := h.rollback(t, "v0.1.0", ""); r.Line() != "result=success action=rollback from=v0.1.0 to=v0.0.8" {
			t.Fatalf("rollback: %s\n%s", r.Line(), out)
		}
		h.must(t, h.exe, binaryOf("v0.0.8"))
	})
}

// Backups are ordered by the time the node's index gives, never by the
// one a backup states: a backup planted with a description dated 2099,
// or a copy of a real one whose description was changed, wins no
// rollback and is not kept by prune.
func TestBackupsAreTrustedOnlyThroughTheIndex(t *testing.T) {
	h := newHost(newBin)
	day := 24 * time.Hour
	h.oldBackup("v0.0.8", h.clock.now.Add(-2*day))
	h.oldBackup("v0.0.9", h.clock.now.Add(-day))
	h.plantBackup("v0.0.1", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	// v0.0.9's description is rewritten to claim a later date.
	info := ospath.Join(ospath.Windows, h.paths.Backup("v0.0.9"), backupInfoFile)
	data, _ := h.fs.get(info)
	h.fs.put(info, []byte(strings.Replace(data, `"version"`, `"created":"2099-01-01T00:00:00Z","version"`, 1)))
	h.clock.now = h.clock.now.Add(time.Hour)

	if _, err := readBackup(h.env(1, "v0.1.0"), h.paths.Backup("v0.0.1")); err == nil || !strings.Contains(err.Error(), "is not a backup this node made") {
		t.Errorf("the planted backup reads as %v", err)
	}
	if _, err := readBackup(h.env(1, "v0.1.0"), h.paths.Backup("v0.0.9")); err == nil || !strings.Contains(err.Error(), "is not the description the node wrote") {
		t.Errorf("the rewritten description reads as %v", err)
	}
	r, out := h.rollback(t, "v0.1.0", "")
	if r.Line() != "result=success action=rollback from=v0.1.0 to=v0.0.8" {
		t.Fatalf("rollback chose %s\n%s", r.Line(), out)
	}
	h.must(t, h.exe, binaryOf("v0.0.8"))
	if r, _ := h.rollback(t, "v0.0.8", "v0.0.1"); r.Status != StatusRefused || !strings.Contains(r.Reason, "is not a backup this node made") {
		t.Errorf("rollback --to the planted backup: %s", r.Line())
	}

	// Prune counts and removes only the node's backups; the planted one
	// is left, named, for the operator.
	h.clock.now = h.clock.now.Add(time.Hour)
	if r, out = h.upgradeTo(t, "v0.0.8", "v0.1.0"); r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	h.clock.now = h.clock.now.Add(time.Hour)
	if r, out = h.upgradeTo(t, "v0.1.0", "v0.2.0"); r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	wantLines(t, out, `left C:\etc\kubeedge\backup\v0.0.1: the node's index of backups does not list it`)
	h.wantBackups(t, "v0.0.1", "v0.0.8", "v0.1.0")
	var ix backupIndex
	data, _ = h.fs.get(h.paths.BackupIndex)
	if err := json.Unmarshal([]byte(data), &ix); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range ix.Backups {
		names = append(names, en.Name)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{"v0.0.8", "v0.1.0"}) {
		t.Errorf("the index lists %v", names)
	}
}

func TestARemovalThatFailsIsAWarning(t *testing.T) {
	h := newHost(newBin)
	h.oldBackup("v0.0.7", h.clock.now.Add(-3*time.Hour))
	h.oldBackup("v0.0.8", h.clock.now.Add(-2*time.Hour))
	h.oldBackup("v0.0.9", h.clock.now.Add(-time.Hour))
	h.fs.fail = func(op, path string) error {
		if op == "removeall" && strings.HasSuffix(path, `v0.0.7`) {
			return errors.New("Access is denied")
		}
		return nil
	}
	h.clock.now = h.clock.now.Add(time.Hour)
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusSuccess || r.ExitCode() != 0 {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	wantLines(t, out,
		`      warning: could not remove the old backup C:\etc\kubeedge\backup\v0.0.7 (v0.0.7): Access is denied; the next upgrade or rollback tries again`,
		`      removed old backup C:\etc\kubeedge\backup\v0.0.8 (v0.0.8)`)
	// What is left of it is no longer offered as a backup.
	if r, _ := h.rollback(t, "v0.2.0", "v0.0.7"); r.Status != StatusRefused || !strings.Contains(r.Reason, "no complete backup") {
		t.Errorf("rollback to the half-removed backup: %s", r.Line())
	}

	h.fs.fail = nil
	h.clock.now = h.clock.now.Add(time.Hour)
	if r, out = h.upgradeTo(t, "v0.2.0", "v0.3.0"); r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	wantLines(t, out, `removed interrupted backup C:\etc\kubeedge\backup\v0.0.7 (no backup.json)`)
	h.wantBackups(t, "v0.1.0", "v0.2.0")
}

// A NodeUpgradeJob's Init may stage the next package while an upgrade
// runs; it is kept for the upgrade it is for.
func TestAPackageStagedDuringTheUpgradeIsKept(t *testing.T) {
	h := newHost(newBin)
	staged := false
	h.clock.onTick = append(h.clock.onTick, func() {
		if !staged {
			staged = true
			h.stage("v0.3.0")
		}
	})
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	if got := h.dirs(h.paths.StateDir); !reflect.DeepEqual(got, []string{"v0.3.0"}) {
		t.Errorf("staging directories %v\n%s", got, out)
	}
	h.clock.now = h.clock.now.Add(time.Hour)
	if r, out = h.upgradeTo(t, "v0.2.0", "v0.3.0"); r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	if got := h.dirs(h.paths.StateDir); len(got) != 0 {
		t.Errorf("staging directories %v\n%s", got, out)
	}
}

// A rollback that failed leaves every backup to the operator.
func TestNothingIsPrunedAfterAFailedRollback(t *testing.T) {
	h := newHost(badBin)
	h.oldBackup("v0.0.7", h.clock.now.Add(-3*time.Hour))
	h.oldBackup("v0.0.8", h.clock.now.Add(-2*time.Hour))
	h.fs.fail = func(op, path string) error {
		if op == "copy" && path == h.config {
			return errors.New("Access is denied")
		}
		return nil
	}
	r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0")))
	if r.Status != StatusFailed {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	if got := h.dirs(h.paths.BackupRoot); !reflect.DeepEqual(got, []string{"v0.0.7", "v0.0.8", "v0.1.0"}) {
		t.Errorf("backups %v", got)
	}
	if got := h.dirs(h.paths.StateDir); !reflect.DeepEqual(got, []string{"v0.2.0"}) {
		t.Errorf("staging directories %v", got)
	}
}
