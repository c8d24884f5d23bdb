// These tests take SQLite's own error on a full database from a real
// database, which needs cgo's go-sqlite3; the Windows test binaries run
// under Wine are built without cgo, and the policy they test reads only the
// error's text, the same on every OS, so the Linux run proves it.

//go:build cgo

package modules

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/kubeedge/beehive/pkg/core/model"
	"github.com/kubeedge/kubeedge/edge/pkg/common/modules"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager"
)

// sqliteFull is the error a real SQLite database gives when it cannot
// grow: one capped at a few pages (max_page_count) fails as a database on a
// full disk does, with SQLITE_FULL. metaManager wraps it as below.
func sqliteFull(t *testing.T) error {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "edgecore.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)", "PRAGMA max_page_count = 3"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 64<<10)
	for i := 0; i < 10; i++ {
		if _, err = db.Exec("INSERT INTO meta VALUES (?, ?)", fmt.Sprint(i), string(big)); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("a database capped at 3 pages took 640 KiB")
	}
	return fmt.Errorf("insert or update meta failed, %s", err)
}

func message(source, operation, resource string) *model.Message {
	return model.NewMessage("").BuildRouter(source, "", resource, operation)
}

// With the database full, the node's and pods' statuses from edged and
// the responses between edged and the cloud go on unrecorded; what the
// cloud sends to create or delete is refused as upstream refuses it, and
// so is every message when the failure is not for want of space.
func TestStatusesGoOnWhenTheDatabaseIsFull(t *testing.T) {
	full := sqliteFull(t)
	if !isDiskFull(full) {
		t.Fatalf("SQLite's error on a full database not recognised: %v", full)
	}
	locked := errors.New("insert or update meta failed, database is locked")
	clock := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	p := &statusGoesOn{now: func() time.Time { return clock }, interval: time.Minute}
	cases := []struct {
		name string
		msg  *model.Message
		err  error
		want bool
	}{
		{"node status patch", message(modules.EdgedModuleName, model.PatchOperation, "null/nodepatch/node-1"), full, true},
		{"pod status patch", message(modules.EdgedModuleName, model.PatchOperation, "default/podpatch/app-1"), full, true},
		{"pod status update", message(modules.EdgedModuleName, model.UpdateOperation, "default/podstatus/app-1"), full, true},
		{"the cloud's response", message("edgecontroller", model.ResponseOperation, "default/pod/app-1"), full, true},
		{"a pod from the cloud", message("edgecontroller", model.InsertOperation, "default/pod/app-1"), full, false},
		{"a pod update from the cloud", message("edgecontroller", model.UpdateOperation, "default/pod/app-1"), full, false},
		{"a status on another failure", message(modules.EdgedModuleName, model.PatchOperation, "null/nodepatch/node-1"), locked, false},
		{"no error", message(modules.EdgedModuleName, model.PatchOperation, "null/nodepatch/node-1"), nil, false},
		{"no message", nil, full, false},
	}
	for _, c := range cases {
		if got := p.decide(c.msg, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Logged at the first, then once a minute with the count between.
	if p.logged != clock || p.passed != 3 {
		t.Errorf("logged at %v with %d passed since", p.logged, p.passed)
	}
	clock = clock.Add(time.Minute)
	p.decide(cases[0].msg, full)
	if p.logged != clock || p.passed != 0 {
		t.Errorf("a minute later: logged at %v with %d passed since", p.logged, p.passed)
	}
}

// Register's hook is the policy: the patched metaManager asks it.
func TestStoreFailedHookInstalled(t *testing.T) {
	saved := metamanager.StoreFailed
	defer func() { metamanager.StoreFailed = saved }()
	full := sqliteFull(t)
	if metamanager.StoreFailed(message(modules.EdgedModuleName, model.PatchOperation, "null/nodepatch/node-1"), full) {
		t.Fatal("upstream's default lets a message go on")
	}
	installStoreFailed()
	if !metamanager.StoreFailed(message(modules.EdgedModuleName, model.PatchOperation, "null/nodepatch/node-1"), full) {
		t.Error("the installed hook stops a node status on a full database")
	}
}
