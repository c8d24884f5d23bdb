//go:build e2e

package e2e

import (
	"database/sql"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
)

// TestWindowsUpgradeFromPrevious moves a node of the previous release
// (PREVIOUS_EDGECORE_EXE: the last release build/released-versions lists,
// v0.1.0 built from KubeEdge v1.20, which `make e2e` builds from its
// commit) to this release's own package (RELEASE_ZIP, what `make package`
// ships) the way docs/releases.md tells an operator to: on the host, with
// the old binary's own `edgecore.exe upgrade --package`, since cloudcore
// v1.23 sends an old node no NodeUpgradeJob it understands. The node must
// come back Ready on the new release with what it kept: its name, its pod
// (same container, no second sandbox), the pod in its database, and the
// configuration the old release wrote, completed with v1.23's taskManager.
// Then the new binary's `rollback` brings back the previous release, the
// pod still untouched and still in the database.
func TestWindowsUpgradeFromPrevious(t *testing.T) {
	// What the test checks is what docs/releases.md promises an operator.
	prev := mustEnv(t, "PREVIOUS_EDGECORE_EXE")
	pkg := mustEnv(t, "RELEASE_ZIP")
	prevKE, ke := mustEnv(t, "PREVIOUS_KUBEEDGE"), mustEnv(t, "KUBEEDGE_VERSION")
	prevVersion, version := mustEnv(t, "PREVIOUS_VERSION"), mustEnv(t, "VERSION")

	c := startCluster(t)
	h := newWinHost(t)
	h.exe = prev
	h.install(t, `C:\Program Files\edgecore`)
	j := &journey{t: t, c: c, h: h, token: c.token(t), layout: config.NewLayout(config.Host{GOOS: "windows"})}
	j.fakecri = j.startFakeCRI("fakecri")

	j.node = j.joinedNode(j.run(j.args(joinCommand), 0).out)
	eventually(t, readyBound, "node "+j.node+" Ready on the previous release", c.nodeReady(j.node, time.Time{}))
	j.runsKubeEdge(prevKE)
	e := &edge{os: "windows", name: j.node, fakecri: j.fakecri}
	j.carried = j.runPod("carried")
	rows := j.metaKeys()
	oldConfig := string(j.read(j.layout.ConfigFile))
	logBefore := fileSize(h.drive(j.layout.LogFile))

	steps := []struct {
		args     []string
		result   string
		kubeedge string
	}{
		{[]string{"upgrade", "--package", winPath(pkg), "--timeout", "3m"}, "result=success action=upgrade from=" + prevVersion + " to=" + version, ke},
		{[]string{"rollback"}, "result=success action=rollback from=" + version + " to=" + prevVersion, prevKE},
	}
	for i, s := range steps {
		offset := fileSize(h.drive(j.layout.LogFile))
		r := h.edgecore(t, upgradeBound, s.args...)
		t.Logf("edgecore.exe %s: exit %d after %s\n%s", strings.Join(s.args, " "), r.code, fmtDur(r.duration), indent(r.out))
		if r.code != 0 || !strings.Contains(lastLine(r.out), s.result) {
			j.dumpLog()
			j.dumpUpgradeLog()
			fatalf(t, "edgecore.exe %s: exit %d and last line %q; want exit 0 and %q", s.args[0], r.code, lastLine(r.out), s.result)
		}
		j.backAfter(offset, s.args[0])
		j.runsKubeEdge(s.kubeedge)
		e.createdOnce(t, 1, s.args[0])
		j.knowsPod("carried", s.args[0])
		j.keptRows(rows, s.args[0])
		if i == 0 {
			j.carriedConfig(oldConfig, logBefore)
		}
		t.Logf("%s: %s in %s, node %s Ready on KubeEdge %s, pod carried in the same container", s.args[0], s.result, fmtDur(r.duration), j.node, s.kubeedge)
	}
	wantCreated(t, j.fakecri.log, "the upgrade and the rollback", map[string]created{"default/carried": {1, 1}})
}

// carriedConfig checks that the new release runs the configuration the
// previous one wrote, unchanged on disk (a rollback needs it as it was),
// with the taskManager module v1.23's node jobs need running although the
// file has no section for it (the defaults it is loaded onto enable it).
func (j *journey) carriedConfig(before string, logOffset int64) {
	j.t.Helper()
	if now := string(j.read(j.layout.ConfigFile)); now != before {
		errorf(j.t, "the upgrade changed %s:\n--- before\n%s\n--- after\n%s", j.layout.ConfigFile, before, now)
	}
	if strings.Contains(before, "taskManager") {
		errorf(j.t, "the previous release's configuration already names taskManager: this check proves nothing\n%s", before)
	}
	want := "Module taskmanager registered successfully"
	eventually(j.t, readyBound, "the new release's log shows the taskmanager module registered", func() (bool, error) {
		data, err := os.ReadFile(j.h.drive(j.layout.LogFile))
		if err != nil {
			return false, err
		}
		if int64(len(data)) < logOffset {
			logOffset = 0
		}
		return strings.Contains(string(data[logOffset:]), want), nil
	})
}

// knowsPod checks that the node's database, carried across the upgrade,
// still holds the pod.
func (j *journey) knowsPod(pod, event string) {
	j.t.Helper()
	path := j.h.drive(j.layout.DataSource)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		fatal(j.t, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM meta WHERE key = ?", "default/pod/"+pod).Scan(&n); err != nil || n == 0 {
		errorf(j.t, "after %s the node's database %s does not hold pod %s (rows %d, %v)", event, path, pod, n, err)
	}
}

// metaKeys is the set of keys of the node's database (the meta table the
// node keeps the cloud's objects in), read while the node runs.
func (j *journey) metaKeys() map[string]bool {
	j.t.Helper()
	path := j.h.drive(j.layout.DataSource)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		fatal(j.t, err)
	}
	defer db.Close()
	rs, err := db.Query("SELECT key FROM meta")
	if err != nil {
		fatalf(j.t, "reading the node's database %s: %v", path, err)
	}
	defer rs.Close()
	keys := map[string]bool{}
	for rs.Next() {
		var k string
		if err := rs.Scan(&k); err != nil {
			fatal(j.t, err)
		}
		keys[k] = true
	}
	if err := rs.Err(); err != nil {
		fatal(j.t, err)
	}
	if len(keys) == 0 {
		fatalf(j.t, "the node's database %s has no rows: this check proves nothing", path)
	}
	return keys
}

// keptRows checks that every row the database held before the move is
// still there after it.
func (j *journey) keptRows(before map[string]bool, event string) {
	j.t.Helper()
	after := j.metaKeys()
	var lost []string
	for k := range before {
		if !after[k] {
			lost = append(lost, k)
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		errorf(j.t, "after %s the node's database lost %d of its %d rows: %v", event, len(lost), len(before), lost)
		return
	}
	j.t.Logf("after %s the node's database holds all %d rows it had before (%d now)", event, len(before), len(after))
}
