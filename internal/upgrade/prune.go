package upgrade

import (
	"sort"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// keepBackups is how many complete backups survive pruning. Each holds a
// whole binary and a database, and months of upgrades on a small disk
// must not add up; two leave `rollback` a way back and one step further.
const keepBackups = 2

// prune bounds the disk that upgrades use. It is the only place that
// removes backups and staged packages, and it runs only once a journal is
// done: while one is in progress its backup and its staged binary may
// still be needed, and a journal that is not written as done (its save
// failed) cannot be told from one in progress. What it keeps:
//   - the newest keepBackups complete backups;
//   - the journal's own backup directory, whatever its state or age: it is
//     where a resumed journal and the helper the node starts look;
//   - the backup `edgecore.exe rollback` would restore next, as
//     chooseBackup picks it, even when two newer ones exist: chooseBackup
//     skips a damaged one, and a clock that was set back makes a recent
//     backup look old;
//   - directories changed after the journal began, which belong to work
//     that has not begun yet (a NodeUpgradeJob's Init may stage a package,
//     or its BackingUp step write a backup, while this journal runs); the
//     next prune decides about them.
//
// Removing something that cannot be removed is a warning: the upgrade or
// rollback is done, and the next prune tries again.
func (d *driver) prune() {
	e := d.e
	j, err := loadJournal(e)
	if err != nil || j == nil || !j.Done() {
		return
	}
	keep := []string{j.Backup}
	if dir, _, err := chooseBackup(e, runningAfter(j), ""); err == nil {
		keep = append(keep, dir)
	}
	d.pruneBackups(j, keep)
	d.pruneStaging(j)
}

// runningAfter is the version the service runs once j is done.
func runningAfter(j *Journal) string {
	if j.Outcome == OutcomeSuccess {
		return j.To
	}
	return j.From
}

// prunable is a backup or staging directory, named by its version.
type prunable struct {
	dir, version string
	modified     time.Time
	// at orders complete backups, newest first.
	at time.Time
}

func (d *driver) pruneBackups(j *Journal, keep []string) {
	e := d.e
	ix, err := loadIndex(e)
	if err != nil {
		d.printf("warning: %v; no backup is removed\n", err)
		return
	}
	var complete, incomplete []prunable
	for _, b := range d.listDirs(e.Paths.BackupRoot) {
		en := ix.entry(e, b.dir)
		switch {
		case en == nil:
			// Not the node's: it is never restored, and what is in it
			// is for the operator to look at.
			d.printf("left %s: the node's index of backups does not list it (made by a release before the index, or not by the node); remove it if nobody needs it\n", b.dir)
			continue
		case en.Config:
			// A configuration job's, which only its own journal
			// restores.
			b.version = "a configuration job's"
			incomplete = append(incomplete, b)
			continue
		case en.Info == "":
			b.version = "no " + backupInfoFile
			incomplete = append(incomplete, b)
			continue
		}
		b.version, b.at = en.Version, en.Created
		complete = append(complete, b)
	}
	sort.SliceStable(complete, func(a, b int) bool { return complete[a].at.After(complete[b].at) })
	kept := func(dir string) bool {
		for _, k := range keep {
			if ospath.Same(e.GOOS, k, dir) {
				return true
			}
		}
		return false
	}
	changed := false
	for i, b := range complete {
		if i < keepBackups || kept(b.dir) {
			continue
		}
		// The description goes first: a removal cut short then leaves an
		// incomplete backup, which no rollback picks and the next prune
		// removes, rather than a complete-looking one with files missing.
		info := ospath.Join(e.GOOS, b.dir, backupInfoFile)
		if err := e.FS.Remove(info); err != nil && !isNotExist(err) {
			d.printf("warning: could not remove the old backup %s (%s): %v; the next upgrade or rollback tries again\n", b.dir, b.version, err)
			continue
		}
		if en := ix.entry(e, b.dir); en != nil {
			en.Info = ""
			changed = true
		}
		if d.removeAll(b.dir, "old backup", b.version) {
			ix.drop(e, b.dir)
		}
	}
	for _, b := range incomplete {
		if kept(b.dir) || b.modified.After(j.Created) {
			continue
		}
		if d.removeAll(b.dir, "interrupted backup", b.version) {
			ix.drop(e, b.dir)
			changed = true
		}
	}
	if changed {
		if err := saveIndex(e, ix); err != nil {
			d.printf("warning: %v\n", err)
		}
	}
}

func (d *driver) pruneStaging(j *Journal) {
	for _, s := range d.listDirs(d.e.Paths.StateDir) {
		if s.modified.After(j.Created) {
			continue
		}
		d.removeAll(s.dir, "staged package", s.version)
	}
}

// listDirs lists the directories in root, each named by its version.
func (d *driver) listDirs(root string) []prunable {
	e := d.e
	entries, err := e.FS.ReadDir(root)
	if err != nil {
		if !isNotExist(err) {
			d.printf("warning: could not list %s to remove what is no longer needed: %v\n", root, err)
		}
		return nil
	}
	var dirs []prunable
	for _, de := range entries {
		n := de.Name()
		dir := ospath.Join(e.GOOS, root, n)
		st, err := e.FS.Stat(dir)
		if err != nil || !st.IsDir() {
			continue
		}
		dirs = append(dirs, prunable{dir: dir, version: n, modified: st.ModTime()})
	}
	return dirs
}

func (d *driver) removeAll(dir, what, note string) bool {
	if err := d.e.FS.RemoveAll(dir); err != nil {
		d.printf("warning: could not remove the %s %s (%s): %v; the next upgrade or rollback tries again\n", what, dir, note, err)
		return false
	}
	d.printf("removed %s %s (%s)\n", what, dir, note)
	return true
}
