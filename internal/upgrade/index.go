package upgrade

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// backupIndexFile lists the backups the node made, in its upgrade state
// directory (Paths.BackupIndex).
const backupIndexFile = "backups.json"

// backupIndex is the node's own list of the backups it made. A backup is
// restored, chosen for a rollback and ordered by age only through it: a
// backup's own description says whatever whoever wrote it wanted (a
// folder planted with a description dated 2099 would win every rollback
// and survive every prune). The index lies in the upgrade state
// directory, which the node restricts to SYSTEM and Administrators before
// it writes anything there, and pins each backup's description by its
// SHA-256.
type backupIndex struct {
	Backups []indexEntry `json:"backups"`
}

// indexEntry is one backup the node made.
type indexEntry struct {
	// Name is the backup's directory in Paths.BackupRoot.
	Name    string    `json:"name"`
	Version string    `json:"version"`
	Created time.Time `json:"created"`
	// DataSource is the database it was made from.
	DataSource string `json:"dataSource"`
	// Info is the SHA-256 of its description (backup.json) as the node
	// wrote it; "" while the backup is being made.
	Info string `json:"info,omitempty"`
	// Adopted says the backup was made by a release before the index,
	// and taken into it because that release's own journal names it.
	Adopted bool `json:"adopted,omitempty"`
	// Config marks a configuration job's backup (configBackupInfo):
	// the configuration only, never a version to roll back to.
	Config bool `json:"config,omitempty"`
}

// loadIndex reads the node's index of its backups. A node that has none
// yet was upgraded by a release before the index: the backup its last
// journal names (the one `rollback` goes back to) is taken into it; no
// other backup of that release is trusted. The index is written only
// when a backup is added or removed.
func loadIndex(e Env) (*backupIndex, error) {
	data, err := e.FS.ReadFile(e.Paths.BackupIndex)
	if err == nil {
		var ix backupIndex
		if err := json.Unmarshal(data, &ix); err != nil {
			return nil, fmt.Errorf("the index of backups %s is damaged (%v): no backup is restored until it is repaired; "+
				"fix: delete it and the backups in %s, which the node can then no longer tell from planted ones", e.Paths.BackupIndex, err, e.Paths.BackupRoot)
		}
		return &ix, nil
	}
	if !isNotExist(err) {
		return nil, fmt.Errorf("read the index of backups %s: %w", e.Paths.BackupIndex, err)
	}
	ix := &backupIndex{}
	// The journal is read as written: loadJournal's checks ask the
	// index.
	raw, err := e.FS.ReadFile(e.Paths.Journal)
	if err != nil {
		return ix, nil
	}
	var j Journal
	if json.Unmarshal(raw, &j) != nil || j.Backup == "" || !ospath.Same(e.GOOS, ospath.Dir(e.GOOS, j.Backup), e.Paths.BackupRoot) {
		return ix, nil
	}
	info, err := e.FS.ReadFile(ospath.Join(e.GOOS, j.Backup, backupInfoFile))
	if err != nil {
		return ix, nil
	}
	var b BackupInfo
	if json.Unmarshal(info, &b) != nil {
		return ix, nil
	}
	ix.Backups = append(ix.Backups, indexEntry{Name: ospath.Base(e.GOOS, j.Backup), Version: b.Version, Created: b.Created,
		DataSource: b.DataSource, Info: digest(info), Adopted: true})
	return ix, nil
}

func saveIndex(e Env, ix *backupIndex) error {
	data, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	if err := e.FS.MkdirAll(e.Paths.StateDir); err != nil {
		return fmt.Errorf("create %s: %w", e.Paths.StateDir, err)
	}
	if err := e.Restrict(e.Paths.StateDir); err != nil {
		return fmt.Errorf("restrict %s to SYSTEM and Administrators: %w", e.Paths.StateDir, err)
	}
	if err := e.FS.WriteFile(e.Paths.BackupIndex, data); err != nil {
		return fmt.Errorf("write the index of backups %s: %w", e.Paths.BackupIndex, err)
	}
	return nil
}

// entry is the index's entry of the backup directory dir, nil when the
// node did not make it.
func (ix *backupIndex) entry(e Env, dir string) *indexEntry {
	if !ospath.Same(e.GOOS, ospath.Dir(e.GOOS, dir), e.Paths.BackupRoot) {
		return nil
	}
	name := ospath.Base(e.GOOS, dir)
	for i := range ix.Backups {
		if ospath.Same(e.GOOS, ix.Backups[i].Name, name) {
			return &ix.Backups[i]
		}
	}
	return nil
}

// put records en, replacing an entry of the same directory.
func (ix *backupIndex) put(e Env, en indexEntry) {
	for i := range ix.Backups {
		if ospath.Same(e.GOOS, ix.Backups[i].Name, en.Name) {
			ix.Backups[i] = en
			return
		}
	}
	ix.Backups = append(ix.Backups, en)
}

// drop removes the entry of dir.
func (ix *backupIndex) drop(e Env, dir string) {
	name := ospath.Base(e.GOOS, dir)
	kept := ix.Backups[:0]
	for _, en := range ix.Backups {
		if !ospath.Same(e.GOOS, en.Name, name) {
			kept = append(kept, en)
		}
	}
	ix.Backups = kept
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// notIndexed is the error of a backup directory the node did not make.
func notIndexed(e Env, dir string) error {
	return fmt.Errorf("%s is not a backup this node made: its index of backups (%s) does not list it, so it is never restored, whatever it says of itself; "+
		"fix: find out who put it there, then remove it", dir, e.Paths.BackupIndex)
}
