package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// A node upgraded by a release before the index (v0.1.0 ran its own
// `upgrade`, as the e2e's previous release does) has backups but no
// index: the one its journal names, the way back `rollback` takes, is
// trusted and enters the index; any other backup of that time is not.
func TestABackupOfAReleaseBeforeTheIndex(t *testing.T) {
	h := newHost(newBin)
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
		t.Fatalf("upgrade: %s\n%s", r.Line(), out)
	}
	// As the earlier release left the host: no index.
	delete(h.fs.files, key(h.paths.BackupIndex))
	h.plantBackup("v0.0.9", h.clock.now.Add(time.Hour))

	ix, err := loadIndex(h.env(1, "v0.2.0"))
	if err != nil || len(ix.Backups) != 1 || ix.Backups[0].Name != "v0.1.0" || !ix.Backups[0].Adopted {
		t.Fatalf("the index of a node without one: %+v, %v", ix, err)
	}
	if _, err := readBackup(h.env(1, "v0.2.0"), h.paths.Backup("v0.0.9")); err == nil {
		t.Error("a backup the journal does not name is trusted")
	}
	var out bytes.Buffer
	r := Rollback(context.Background(), &out, h.env(200, "v0.2.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Line() != "result=success action=rollback from=v0.2.0 to=v0.1.0" {
		t.Fatalf("rollback: %s\n%s", r.Line(), out.String())
	}
	h.must(t, h.exe, oldBin)

	// The next backup the node makes writes the index, the adopted
	// backup with it: it stays trusted once the journal names another.
	h.clock.now = h.clock.now.Add(time.Hour)
	h.fs.put(h.exe, []byte(binaryOf("v0.1.5")))
	h.svc.binaries[binaryOf("v0.1.5")] = program{version: "v0.1.5", connects: true, readyAfter: 3 * time.Second}
	if r, out := h.upgradeTo(t, "v0.1.5", "v0.2.0"); r.Status != StatusSuccess {
		t.Fatalf("%s\n%s", r.Line(), out)
	}
	ix, err = loadIndex(h.env(1, "v0.2.0"))
	if err != nil || len(ix.Backups) != 2 || ix.entry(h.env(1, ""), h.paths.Backup("v0.1.0")) == nil || !ix.entry(h.env(1, ""), h.paths.Backup("v0.1.0")).Adopted {
		t.Errorf("the index after the next upgrade: %+v, %v", ix, err)
	}
	if _, err := readBackup(h.env(1, "v0.2.0"), h.paths.Backup("v0.1.0")); err != nil {
		t.Errorf("the adopted backup: %v", err)
	}
}

// A rollback deletes and overwrites only what the backup was made of: a
// journal whose paths differ from its backup's (pinned by the index)
// restores nothing.
func TestRestoreWritesOnlyWhatTheBackupCameFrom(t *testing.T) {
	h := newHost(newBin)
	h.oldBackup("v0.0.9", h.clock.now.Add(-time.Hour))
	// The index says the backup was made of another database.
	info := ospath.Join(ospath.Windows, h.paths.Backup("v0.0.9"), backupInfoFile)
	data, _ := h.fs.get(info)
	var b map[string]any
	if err := json.Unmarshal([]byte(data), &b); err != nil {
		t.Fatal(err)
	}
	b["dataSource"] = `D:\old\edgecore.db`
	raw, _ := json.Marshal(b)
	h.fs.put(info, raw)
	h.indexBackup(indexEntry{Name: "v0.0.9", Version: "v0.0.9", Created: h.clock.now.Add(-time.Hour), DataSource: `D:\old\edgecore.db`, Info: digest(raw)})
	h.fs.put(h.db+"-journal", []byte("the live database's journal"))

	var out bytes.Buffer
	r := Rollback(context.Background(), &out, h.env(200, "v0.1.0"), h.facts(), RollbackOptions{Version: "v0.0.9", Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusFailed || !strings.Contains(r.Reason, `dataSource is C:\var\lib\kube edge\edgecore.db, but the backup C:\etc\kubeedge\backup\v0.0.9 was made of D:\old\edgecore.db`) {
		t.Fatalf("rollback: %s\n%s", r.Line(), out.String())
	}
	h.must(t, h.exe, oldBin)
	h.must(t, h.db, oldDB)
	h.must(t, h.db+"-journal", "the live database's journal")
}

// takeover --token: the node's certificate and key are moved aside once
// the new binary and configuration are in place, so that it applies for
// new ones; they are removed once it passed the health gate, and put back
// over whatever it wrote when it did not.
func TestAdoptRetiresTheCertificate(t *testing.T) {
	const cert, key = `C:\etc\kubeedge\certs\server.crt`, `C:\etc\kubeedge\certs\server.key`
	for _, tc := range []struct {
		name    string
		bin     string
		healthy bool
	}{{"healthy", newBin, true}, {"not healthy", badBin, false}} {
		t.Run(tc.name, func(t *testing.T) {
			h, self := keadmHost(tc.bin)
			if !tc.healthy {
				h.svc.binaries[badBin] = program{version: "v0.2.0", connects: false}
			}
			h.fs.put(cert, []byte("keadm's certificate"))
			h.fs.put(key, []byte("keadm's key, readable by every user"))
			// What the new binary does at its start: applies for a new
			// certificate with the token.
			started := false
			h.clock.onTick = append(h.clock.onTick, func() {
				if h.svc.running.version == "v0.2.0" && !started {
					started = true
					if _, ok := h.fs.get(cert); ok {
						t.Error("the new binary found the old certificate")
					}
					h.fs.put(cert, []byte("new certificate"))
					h.fs.put(key, []byte("new key"))
				}
			})
			var out bytes.Buffer
			h.alive[driverPID] = true
			in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db}
			r, err := Adopt(context.Background(), &out, h.env(driverPID, "v0.2.0"),
				Adoption{Installed: in, FromLabel: "keadm", Binary: self, Config: []byte(ourConfig), Timeout: time.Minute, Retire: []string{cert, key}})
			if err != nil {
				t.Fatal(err)
			}
			if !started {
				t.Fatalf("the new binary never ran:\n%s", out.String())
			}
			if tc.healthy {
				if r.Status != StatusSuccess {
					t.Fatalf("%s\n%s", r.Line(), out.String())
				}
				h.must(t, key, "new key")
				wantLines(t, out.String(), "moved "+key+" aside", "removed the old "+key)
			} else {
				if r.Status != StatusRolledBack {
					t.Fatalf("%s\n%s", r.Line(), out.String())
				}
				h.must(t, cert, "keadm's certificate")
				h.must(t, key, "keadm's key, readable by every user")
				wantLines(t, out.String(), "put "+key+" back")
			}
			for _, f := range []string{cert, key} {
				if _, ok := h.fs.get(f + retiredSuffix); ok {
					t.Errorf("%s left", f+retiredSuffix)
				}
			}
		})
	}

	h, self := keadmHost(newBin)
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db}
	if _, err := Adopt(context.Background(), &bytes.Buffer{}, h.env(driverPID, "v0.2.0"),
		Adoption{Installed: in, FromLabel: "keadm", Binary: self, Config: []byte(ourConfig), Timeout: time.Minute, Retire: []string{`D:\certs\server.key`}}); err == nil ||
		!strings.Contains(err.Error(), `D:\certs\server.key is not in C:\etc\kubeedge`) {
		t.Errorf("a key outside the KubeEdge directory: %v", err)
	}
}
