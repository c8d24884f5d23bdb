package upgrade

import (
	"context"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/windows/service"
)

func configJob() Request {
	return Request{Job: Job{TaskID: "cuj", TaskType: "ConfigUpdateJob", Node: "win-1"}}
}

// runConfigJob hands text to the driver as the Update action does and runs
// that driver, then lets the edgecore that runs afterwards report.
func runConfigJob(t *testing.T, h *host, text string) (Result, string, []sent) {
	t.Helper()
	js, _, watched := jobsOn(h)
	if r, now := js.UpdateConfig(configJob(), []byte(text)); now {
		t.Fatalf("the update answered at once: %+v", r)
	}
	j := h.journal(t)
	if got := strings.Join(h.svc.spawned[0], " "); got != h.exe+" upgrade --resume --journal "+j.ID {
		t.Errorf("spawned %s", got)
	}
	if j.Kind != KindConfig || j.From != "v0.1.0" || j.To != "v0.1.0" || *watched != 1 {
		t.Errorf("journal %+v, watched %d", j, *watched)
	}
	h.alive[7001] = true
	var out strings.Builder
	r, _, err := Resume(context.Background(), &out, h.env(7001, "v0.1.0"), j.ID)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var got []sent
	n := &Node{Env: h.env(4100, "v0.1.0"), Connected: func() bool { return true }, Ready: func() bool { return true },
		Send: func(j Job, r Report) { got = append(got, sent{j, r}) }, Logf: func(string, ...any) {}}
	if more, err := n.tick(); more || err != nil {
		t.Fatalf("tick: %v %v", more, err)
	}
	return r, out.String(), got
}

func TestConfigUpdateAppliesAndIsReported(t *testing.T) {
	h := newHost(newBin)
	r, out, got := runConfigJob(t, h, "config with maxPods 60")
	if r.Status != StatusSuccess {
		t.Fatalf("%+v\n%s", r, out)
	}
	h.must(t, h.config, "config with maxPods 60")
	// Written for SYSTEM and Administrators from its first byte, not
	// with its folder's ACL until the next start.
	if src := h.fs.private[key(h.config)]; src == "" {
		t.Errorf("%s was not written as a private file", h.config)
	}
	h.must(t, h.exe, oldBin)
	j := h.journal(t)
	h.must(t, j.Backup+`\edgecore.yaml`, oldConfig)
	if !strings.Contains(strings.Join(h.ops.log, "\n"), "restrict "+h.paths.BackupRoot) {
		t.Errorf("the backup was not restricted: %v", h.ops.log)
	}
	if _, ok := h.fs.get(j.Staged); ok {
		t.Error("the staged configuration was left behind")
	}
	if len(got) != 1 || got[0].job.TaskID != "cuj" || got[0].r != (Report{Event: "Update", Success: true}) {
		t.Fatalf("reported %+v", got)
	}
	wantLines(t, out, "back up "+h.config, "start the service edgecore and wait")
}

func TestConfigUpdateThatDoesNotStartIsRolledBack(t *testing.T) {
	h := newHost(newBin)
	h.svc.badConfig = "config edgecore cannot start with"
	r, out, got := runConfigJob(t, h, h.svc.badConfig)
	if r.Status != StatusRolledBack {
		t.Fatalf("%+v\n%s", r, out)
	}
	h.must(t, h.config, oldConfig)
	// Put back from the backup as a private file too.
	if j := h.journal(t); h.fs.private[key(h.config)] != j.Backup+`\edgecore.yaml` {
		t.Errorf("%s was last written privately from %q, want the backup", h.config, h.fs.private[key(h.config)])
	}
	h.must(t, h.exe, oldBin)
	h.must(t, h.db, oldDB)
	if st, _ := h.svc.Query("edgecore"); st.State != service.Running {
		t.Fatalf("the service is %v after the rollback", st)
	}
	if len(got) != 1 || got[0].r.Event != "RollBack" || !got[0].r.Success || !strings.Contains(got[0].r.Reason, "rolled back") || !strings.Contains(got[0].r.Reason, "did not come back") {
		t.Fatalf("reported %+v", got)
	}
}

// A driver that dies once the new configuration may be half written
// leaves the journal in phase swap: whoever takes it over puts the backup
// back.
func TestAConfigUpdateCutShortIsRolledBack(t *testing.T) {
	h := newHost(newBin)
	js, _, _ := jobsOn(h)
	js.UpdateConfig(configJob(), []byte("new config"))
	j := h.journal(t)
	e := h.env(7001, "v0.1.0")
	d := &driver{e: e, j: j, out: &strings.Builder{}}
	h.svc.Stop("edgecore")
	if err := backupConfigFile(e, j); err != nil {
		t.Fatal(err)
	}
	d.phase(PhaseSwap)
	h.fs.put(h.config, []byte("half of the new con"))
	r, resumed, err := Resume(context.Background(), &strings.Builder{}, h.env(7002, "v0.1.0"), "")
	if err != nil || !resumed || r.Status != StatusRolledBack {
		t.Fatalf("%+v %v %v", r, resumed, err)
	}
	h.must(t, h.config, oldConfig)
}
