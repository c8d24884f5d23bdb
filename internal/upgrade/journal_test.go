package upgrade

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A journal whose paths lie outside the node's directories is refused,
// with the journal, the field, the path and the fix named; one whose
// paths are the node's, however they are spelled, is read.
func TestAJournalNamingPathsOutsideTheNodeIsRefused(t *testing.T) {
	const outside = `C:\Users\Public\edgecore.exe`
	for _, tc := range []struct {
		name  string
		edit  func(h *host, j *Journal)
		field string // "" accepted
		value string
	}{
		{"as the upgrade writes it", func(*host, *Journal) {}, "", ""},
		{"the executable spelled another way", func(h *host, j *Journal) { j.Executable = `c:/program files/EDGE CORE/edgecore.exe` }, "", ""},
		{"a configuration elsewhere in the KubeEdge directory", func(h *host, j *Journal) { j.ConfigFile = `C:\etc\kubeedge\edgecore.yaml` }, "", ""},
		{"a configuration beside the binary", func(h *host, j *Journal) { j.ConfigFile = `C:\Program Files\edge core\edgecore.yaml` }, "", ""},
		{"the renamed binary and the standby image", func(h *host, j *Journal) {
			j.Old, j.Image = h.exe+".old-1772359200", `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`
		}, "", ""},
		{"a backup elsewhere", func(_ *host, j *Journal) { j.Backup = `C:\Users\Public\backup` }, "backup", `C:\Users\Public\backup`},
		{"a backup that climbs out", func(_ *host, j *Journal) { j.Backup = `C:\etc\kubeedge\backup\..\..\..\Users\Public` }, "backup", `C:\etc\kubeedge\backup\..\..\..\Users\Public`},
		{"a backup in a sibling of the backup directory", func(_ *host, j *Journal) { j.Backup = `C:\etc\kubeedge\backup-2\v0.1.0` }, "backup", `C:\etc\kubeedge\backup-2\v0.1.0`},
		{"a backup on a share", func(_ *host, j *Journal) { j.Backup = `\\attacker\share\backup` }, "backup", `\\attacker\share\backup`},
		{"no backup", func(_ *host, j *Journal) { j.Backup = "" }, "backup", ""},
		{"a standby image elsewhere", func(_ *host, j *Journal) { j.Image = outside }, "image", outside},
		{"a staged binary elsewhere", func(_ *host, j *Journal) { j.Staged = outside }, "staged", outside},
		{"a staged binary in the backups", func(_ *host, j *Journal) { j.Staged = `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe` }, "staged", `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`},
		{"a takeover's configuration elsewhere", func(_ *host, j *Journal) { j.StagedConfig = outside }, "stagedConfig", outside},
		{"an executable elsewhere", func(_ *host, j *Journal) { j.Executable = outside }, "executable", outside},
		{"an executable in the upgrade directory", func(_ *host, j *Journal) { j.Executable = `C:\etc\kubeedge\upgrade\edgecore.exe` }, "executable", `C:\etc\kubeedge\upgrade\edgecore.exe`},
		{"a renamed binary elsewhere", func(_ *host, j *Journal) { j.Old = outside + ".old" }, "old", outside + ".old"},
		{"a configuration elsewhere", func(_ *host, j *Journal) { j.ConfigFile = `C:\Users\Public\edgecore.yaml` }, "configFile", `C:\Users\Public\edgecore.yaml`},
		{"another service", func(_ *host, j *Journal) { j.Service = "Spooler" }, "service", "Spooler"},
		// A rollback removes the database's SQLite journals and writes
		// the backup's copy over it.
		{"the database spelled another way", func(h *host, j *Journal) { j.DataSource = `c:/VAR/lib/kube edge/edgecore.db` }, "", ""},
		{"a database the configuration does not name", func(_ *host, j *Journal) { j.DataSource = `C:\Windows\System32\config\SAM` }, "dataSource", `C:\Windows\System32\config\SAM`},
		{"a database on a share", func(_ *host, j *Journal) { j.DataSource = `\\attacker\share\edgecore.db` }, "dataSource", `\\attacker\share\edgecore.db`},
		{"the database its backup was made of", func(h *host, j *Journal) {
			j.DataSource = `D:\kubeedge\edgecore.db`
			h.indexBackup(indexEntry{Name: "v0.1.0", Version: "v0.1.0", DataSource: `D:\kubeedge\edgecore.db`})
		}, "", ""},
		{"a certificate to retire outside the KubeEdge directory", func(_ *host, j *Journal) { j.Retire = []string{`C:\Windows\System32\drivers\etc\hosts`} }, "retire", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(newBin)
			e := h.env(driverPID, "v0.1.0")
			j := h.plannedUpgrade(e)
			tc.edit(h, j)
			if err := saveJournal(e, j); err != nil {
				t.Fatal(err)
			}
			got, err := loadJournal(e)
			if tc.field == "" {
				if err != nil || got == nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %+v", got)
			}
			value := tc.value
			if value == "" {
				value = `""`
			}
			wants := []string{`the upgrade journal C:\etc\kubeedge\upgrade\journal.json: ` + tc.field + ` is ` + value + `, which is not `,
				"edgecore runs and copies nothing", "then delete it"}
			if tc.field == "retire" {
				wants = []string{`the upgrade journal C:\etc\kubeedge\upgrade\journal.json: retire: C:\Windows\System32\drivers\etc\hosts is not in C:\etc\kubeedge`}
			}
			for _, want := range wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// While the upgrade swaps the binary the service names the backup's copy
// of it: the binary's own directory is then the one that backup was
// copied from. Without the backup's description nothing tells it, and
// the journal is refused.
func TestTheExecutableDirectoryWhileTheServiceRunsTheStandby(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	j := h.plannedUpgrade(e)
	if _, err := backup(e, j, "v0.1.0", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	j.Phase, j.Image = PhaseSwap, `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`
	saveJournal(e, j)
	h.svc.exe = j.Image
	if _, err := loadJournal(e); err != nil {
		t.Fatalf("the standby's journal was refused: %v", err)
	}

	info := `C:\etc\kubeedge\backup\v0.1.0\backup.json`
	described, _ := h.fs.get(info)
	h.fs.put(info, []byte(strings.Replace(described, `C:\\Program Files\\edge core\\edgecore.exe`, `C:\\Users\\Public\\edgecore.exe`, 1)))
	if _, err := loadJournal(e); err == nil || !strings.Contains(err.Error(), `: executable is C:\Program Files\edge core\edgecore.exe, which is not within C:\Users\Public`) {
		t.Errorf("a backup that stands in for another binary: %v", err)
	}

	h.fs.Remove(info)
	if _, err := loadJournal(e); err == nil || !strings.Contains(err.Error(), `cannot be checked against the service "edgecore"`) ||
		!strings.Contains(err.Error(), "cannot tell which binary it stands in for") {
		t.Errorf("no description: %v", err)
	}

	h.svc.name = "another"
	if _, err := loadJournal(e); err == nil || !strings.Contains(err.Error(), `the service "edgecore" is not installed`) {
		t.Errorf("no service: %v", err)
	}
}

// Nothing is run or copied from a refused journal: the node starts no
// helper from the backup it names, and the commands that would finish it
// refuse without touching the host.
func TestNothingRunsFromARefusedJournal(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	j := h.plannedUpgrade(e)
	j.Phase, j.Backup = PhaseSwap, `C:\Users\Public\backup`
	h.fs.put(`C:\Users\Public\backup\edgecore.exe`, []byte(newBin))
	saveJournal(e, j)
	h.clock.now = h.clock.now.Add(staleAfter)
	h.ops.log = nil

	n := &Node{Env: h.env(4100, "v0.1.0"), Executable: h.exe, Connected: func() bool { return true }, Ready: func() bool { return true },
		Send: func(Job, Report) {}, Logf: func(string, ...any) {}}
	more, err := n.tick()
	if more || err == nil || !strings.Contains(err.Error(), `: backup is C:\Users\Public\backup, which is not within C:\etc\kubeedge\backup`) || len(h.svc.spawned) != 0 {
		t.Errorf("node: more %v, err %v, spawned %v", more, err, h.svc.spawned)
	}

	var out bytes.Buffer
	if _, _, err := Resume(context.Background(), &out, h.env(500, "v0.1.0"), ""); err == nil || !strings.Contains(err.Error(), "then delete it") {
		t.Errorf("resume: %v", err)
	}
	r := Rollback(context.Background(), &out, h.env(500, "v0.1.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, `: backup is C:\Users\Public\backup, which is not within C:\etc\kubeedge\backup`) {
		t.Errorf("rollback: %s", r.Line())
	}
	r = Upgrade(context.Background(), &out, h.env(500, "v0.1.0"), h.facts(), UpgradeOptions{Package: `C:\pkgs\x.zip`, Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused || !strings.Contains(r.Reason, `: backup is C:\Users\Public\backup, which is not within C:\etc\kubeedge\backup`) {
		t.Errorf("upgrade: %s", r.Line())
	}
	if len(h.ops.log) != 0 || len(h.svc.spawned) != 0 {
		t.Errorf("the host was changed: %q, spawned %v", h.ops.log, h.svc.spawned)
	}
	h.must(t, h.exe, oldBin)
}
