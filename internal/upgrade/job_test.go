package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

type sent struct {
	job Job
	r   Report
}

func waitSent(t *testing.T, ch chan sent) sent {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was reported")
	}
	return sent{}
}

// jobsOn runs the job steps on the fake Windows host as the service's
// process of v0.1.0.
func jobsOn(h *host) (*Jobs, *[]sent, *int) {
	var reports []sent
	watched := 0
	h.fs.put(SettingsPath("windows", h.config), []byte(`repository: '\\files\edgecore-{version}-windows-amd64.zip'`))
	h.fs.put(`C:\etc\kubeedge\upgrade\v0.2.0\staged.json`, []byte(fmt.Sprintf(`{"manifest":{"name":"edgecore","version":"v0.2.0","os":"windows","arch":"amd64","binary":"edgecore.exe"},"binary":%q,"sha256":%q}`,
		h.staged, sum(h.stagedContent()))))
	return &Jobs{
		Env: h.env(4000, "v0.1.0"), ConfigFile: h.config, Executable: h.exe, Service: "edgecore", Facts: h.facts(),
		InService: func() (bool, error) { return true, nil },
		FreeDisk:  func(string) (uint64, error) { return 10 << 30, nil },
		Send:      func(j Job, r Report) { reports = append(reports, sent{j, r}) },
		Logf:      func(string, ...any) {},
		Watch:     func() { watched++ },
	}, &reports, &watched
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*host, *Jobs)
		items []string
		want  string
	}{
		{"all pass", func(*host, *Jobs) {}, []string{"cpu", "mem", "disk"}, ""},
		{"not the service", func(_ *host, js *Jobs) { js.InService = func() (bool, error) { return false, nil } }, nil,
			`edgecore does not run as the Windows service "edgecore"`},
		{"not staged", func(h *host, _ *Jobs) { h.fs.Remove(`C:\etc\kubeedge\upgrade\v0.2.0\staged.json`) }, nil, "no package of v0.2.0 was fetched and verified"},
		{"disk full", func(_ *host, js *Jobs) { js.FreeDisk = func(string) (uint64, error) { return 1 << 20, nil } }, []string{"disk"}, "1 MiB free on the volume of C:\\etc\\kubeedge\\upgrade"},
		{"cpu busy", func(_ *host, js *Jobs) {
			js.CheckItems = func(items []string) map[string]string {
				if len(items) != 2 || items[0] != "cpu" || items[1] != "mem" {
					return map[string]string{"items": fmt.Sprint(items)}
				}
				return map[string]string{"cpu": "current cpu usage is 95"}
			}
		}, []string{"cpu", "disk", "mem"}, "cpu: current cpu usage is 95"},
		{"upgrade in progress", func(h *host, js *Jobs) {
			j := h.plannedUpgrade(js.Env)
			j.Phase = PhaseStart
			saveJournal(js.Env, j)
		}, nil, "an upgrade from v0.1.0 to v0.2.0 is in progress (phase start)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(newBin)
			js, _, _ := jobsOn(h)
			tc.edit(h, js)
			r := js.Check(Request{Version: "v0.2.0"}, tc.items)
			if r.Event != "Check" || r.Success != (tc.want == "") || !strings.Contains(r.Reason, tc.want) {
				t.Errorf("%+v, want %q", r, tc.want)
			}
		})
	}
}

// Upgrading hands the journal to a driver started from the backup, which
// the cloud's BackingUp step made; the outcome is reported by whichever
// edgecore runs when the journal is done.
func TestUpgradeStepHandsOverAndTheOutcomeIsReported(t *testing.T) {
	h := newHost(newBin)
	js, _, watched := jobsOn(h)
	// The job's own versions are KubeEdge's; the outcome names them.
	job := Job{TaskID: "nuj", TaskType: "upgrade", Node: "win-1", From: "v1.23.1", To: "v1.23.2"}
	backedUp := make(chan sent, 1)
	js.Send = func(j Job, r Report) { backedUp <- sent{j, r} }
	if r, now := js.Backup(Request{Job: job, Version: "v0.2.0"}); now {
		t.Fatalf("backup answered at once: %+v", r)
	}
	// The backup runs in the background; the fake host is not shared with
	// it after its report.
	if s := waitSent(t, backedUp); !s.r.Success || s.r.Event != "Backup" || s.job != job {
		t.Fatalf("backup reported %+v", s)
	}
	if r, now := js.Upgrade(Request{Job: job, Version: "v0.2.0"}); now {
		t.Fatalf("upgrade answered at once: %+v", r)
	}
	if len(h.svc.spawned) != 1 {
		t.Fatalf("spawned %v", h.svc.spawned)
	}
	j := h.journal(t)
	if got := strings.Join(h.svc.spawned[0], " "); got != `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe upgrade --resume --journal `+j.ID {
		t.Errorf("spawned %s", got)
	}
	if j.Phase != PhasePlanned || j.Driver.PID != 0 || j.Job == nil || *j.Job != job || j.To != "v0.2.0" || time.Duration(j.Timeout) != DefaultTimeout {
		t.Errorf("journal %+v", j)
	}
	if *watched != 1 {
		t.Errorf("the journal is not watched for the report (%d)", *watched)
	}

	// The driver carries it out; the new version reports success once
	// its hub connects.
	h.alive[7001] = true
	var out strings.Builder
	r, _, err := Resume(context.Background(), &out, h.env(7001, "v0.1.0"), j.ID)
	if err != nil || r.Status != StatusSuccess {
		t.Fatalf("%+v %v\n%s", r, err, out.String())
	}
	var got []sent
	n := &Node{Env: h.env(4100, "v0.2.0"), Connected: func() bool { return false }, Ready: func() bool { return true },
		Send: func(j Job, r Report) { got = append(got, sent{j, r}) }, Logf: func(string, ...any) {}}
	if more, _ := n.tick(); !more || len(got) != 0 {
		t.Fatalf("reported without a hub connection: %v %+v", more, got)
	}
	n.Connected = func() bool { return true }
	if more, err := n.tick(); more || err != nil || len(got) != 1 {
		t.Fatalf("tick: %v %v %+v", more, err, got)
	}
	if got[0].job.TaskID != "nuj" || got[0].r != (Report{Event: "Upgrade", Success: true, From: "v1.23.1", To: "v1.23.2"}) {
		t.Errorf("reported %+v", got[0])
	}
	if j := h.journal(t); !j.Job.Reported {
		t.Error("the report was not recorded")
	}
	if more, _ := n.tick(); more || len(got) != 1 {
		t.Error("reported twice")
	}
}

func TestUpgradeStepThatCannotStartItsDriverReportsAtOnce(t *testing.T) {
	h := newHost(newBin)
	js, _, _ := jobsOn(h)
	js.Env.Spawn = func(string, []string, string) (int, error) { return 0, errors.New("Access is denied") }
	r, now := js.Upgrade(Request{Job: Job{TaskID: "nuj"}, Version: "v0.2.0"})
	if !now || r.Event != "Upgrade" || r.Success || !strings.Contains(r.Reason, "Access is denied") {
		t.Errorf("%+v %v", r, now)
	}
	if j := h.journal(t); !j.Done() || !j.Job.Reported || j.Outcome != OutcomeAborted {
		t.Errorf("journal %+v", j)
	}
	h.must(t, h.exe, oldBin)
}

func TestReportOf(t *testing.T) {
	for _, tc := range []struct {
		j    Journal
		want Report
	}{
		{Journal{Kind: KindUpgrade, Outcome: OutcomeSuccess, From: "v0.1.0", To: "v0.2.0"}, Report{Event: "Upgrade", Success: true, From: "v0.1.0", To: "v0.2.0"}},
		{Journal{Kind: KindUpgrade, Outcome: OutcomeRolledBack, From: "v0.1.0", To: "v0.2.0", Reason: "exits"},
			Report{Event: "Rollback", Success: true, Reason: "upgrade to v0.2.0 failed and was rolled back to v0.1.0: exits", From: "v0.1.0", To: "v0.2.0"}},
		{Journal{Kind: KindUpgrade, Outcome: OutcomeAborted, From: "v0.1.0", To: "v0.2.0", Reason: "disk"},
			Report{Event: "Upgrade", Reason: "upgrade to v0.2.0 failed before the binary was replaced; v0.1.0 still runs: disk", From: "v0.1.0", To: "v0.2.0"}},
		{Journal{Kind: KindUpgrade, Outcome: OutcomeFailed, From: "v0.1.0", To: "v0.2.0", Reason: "x"},
			Report{Event: "Rollback", Reason: "upgrade to v0.2.0 failed and so did the rollback to v0.1.0: x", From: "v0.1.0", To: "v0.2.0"}},
		{Journal{Kind: KindRollback, Outcome: OutcomeSuccess, From: "v0.2.0", To: "v0.1.0"}, Report{Event: "Rollback", Success: true, Reason: "rolled back from v0.2.0 to v0.1.0", From: "v0.2.0", To: "v0.1.0"}},
		{Journal{Kind: KindRollback, Outcome: OutcomeFailed, From: "v0.2.0", To: "v0.1.0", Reason: "x"}, Report{Event: "Rollback", Reason: "rollback from v0.2.0 to v0.1.0 failed: x", From: "v0.2.0", To: "v0.1.0"}},
		// A job's upgrade reports the job's KubeEdge versions; the
		// reason still names the releases.
		{Journal{Kind: KindUpgrade, Outcome: OutcomeSuccess, From: "v0.1.0", To: "v0.2.0", Job: &Job{From: "v1.23.1", To: "v1.23.2"}},
			Report{Event: "Upgrade", Success: true, From: "v1.23.1", To: "v1.23.2"}},
		{Journal{Kind: KindUpgrade, Outcome: OutcomeRolledBack, From: "v0.2.0", To: "v0.3.0", Reason: "exits", Job: &Job{From: "v1.23.2", To: "v1.23.3"}},
			Report{Event: "Rollback", Success: true, Reason: "upgrade to v0.3.0 failed and was rolled back to v0.2.0: exits", From: "v1.23.2", To: "v1.23.3"}},
		// A job that named no versions (the cloud's rollback step).
		{Journal{Kind: KindRollback, Outcome: OutcomeSuccess, From: "v0.2.0", To: "v0.1.0", Job: &Job{TaskID: "r"}},
			Report{Event: "Rollback", Success: true, Reason: "rolled back from v0.2.0 to v0.1.0", From: "v0.2.0", To: "v0.1.0"}},
	} {
		if got := reportOf(&tc.j); got != tc.want {
			t.Errorf("%+v: %+v", tc.j, got)
		}
	}
}

// The old version, restored after a failed upgrade, reports the failure.
func TestTheRestoredVersionReportsTheRollback(t *testing.T) {
	h := newHost(badBin)
	js, _, _ := jobsOn(h)
	backupDone := make(chan struct{})
	js.Send = func(Job, Report) { close(backupDone) }
	js.Backup(Request{Job: Job{TaskID: "nuj"}, Version: "v0.2.0"})
	<-backupDone
	js.Send = func(Job, Report) {}
	js.Upgrade(Request{Job: Job{TaskID: "nuj", Node: "win-1"}, Version: "v0.2.0"})
	j := h.journal(t)
	h.alive[7001] = true
	var out strings.Builder
	if r, _, _ := Resume(context.Background(), &out, h.env(7001, "v0.1.0"), j.ID); r.Status != StatusRolledBack {
		t.Fatalf("%+v\n%s", r, out.String())
	}
	var got []Report
	n := &Node{Env: h.env(int(h.svc.st.ProcessID), "v0.1.0"), Connected: func() bool { return true }, Ready: func() bool { return true },
		Send: func(_ Job, r Report) { got = append(got, r) }, Logf: func(string, ...any) {}}
	n.tick()
	if len(got) != 1 || got[0].Event != "Rollback" || !got[0].Success || !strings.Contains(got[0].Reason, "upgrade to v0.2.0 failed and was rolled back to v0.1.0: the service edgecore did not start") {
		t.Errorf("reported %+v", got)
	}
}

func TestRollbackStepRestoresTheLastBackup(t *testing.T) {
	h := newHost(newBin)
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
		t.Fatalf("%+v\n%s", r, out)
	}
	js, _, _ := jobsOn(h)
	js.Env = h.env(int(h.svc.st.ProcessID), "v0.2.0")
	if r, now := js.Rollback(Request{Job: Job{TaskID: "nuj"}}); now {
		t.Fatalf("%+v", r)
	}
	j := h.journal(t)
	if j.Kind != KindRollback || j.From != "v0.2.0" || j.To != "v0.1.0" || j.Backup != `C:\etc\kubeedge\backup\v0.1.0` {
		t.Errorf("journal %+v", j)
	}
	if got := h.svc.spawned[0][0]; got != `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe` {
		t.Errorf("driver %s", got)
	}
}
