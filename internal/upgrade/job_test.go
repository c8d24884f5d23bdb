package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

type sent struct {
	job Job
	r   Report
}

// realJobs runs the job steps of a Linux node in a temporary directory,
// with the package repository a directory with spaces in its name.
func realJobs(t *testing.T) (*Jobs, chan sent, string) {
	t.Helper()
	e, root := realEnv(t)
	cfg := filepath.Join(root, "etc", "kube edge", "config", "edgecore.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	repo := filepath.Join(root, "package repository")
	os.MkdirAll(repo, 0o755)
	os.WriteFile(SettingsPath("linux", cfg), []byte("repository: '"+filepath.Join(repo, "edgecore-{version}-linux-amd64.zip")+"'\n"), 0o644)
	ch := make(chan sent, 10)
	return &Jobs{
		Env: e, ConfigFile: cfg, Executable: filepath.Join(root, "bin", "edgecore"), Service: "edgecore",
		Facts: Facts{Arch: "amd64", DataSource: func(string) (string, error) { return filepath.Join(root, "db", "edgecore.db"), nil }},
		Fetch: Fetcher{}.Fetch,
		Send:  func(j Job, r Report) { ch <- sent{j, r} },
		Logf:  func(string, ...any) {},
		Watch: func() {},
	}, ch, repo
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

func publish(t *testing.T, repo string, m release.Manifest, sums bool) (zipPath, digest string) {
	t.Helper()
	tmp := writeZip(t, filepath.Join(testdir.New(t, "upgrade-test-"), "build"), m, fakeELF())
	zipPath = filepath.Join(repo, "edgecore-"+m.Version+"-linux-amd64.zip")
	if m.KubeEdge != "" && strings.HasPrefix(m.KubeEdge, "v1.2") && m.Version == "v0.2.0-ke" {
		zipPath = filepath.Join(repo, "edgecore-"+m.KubeEdge+"-linux-amd64.zip")
	}
	data, _ := os.ReadFile(tmp)
	os.WriteFile(zipPath, data, 0o644)
	s := sha256.Sum256(data)
	digest = hex.EncodeToString(s[:])
	if sums {
		os.WriteFile(filepath.Join(repo, release.SumsFile), []byte(fmt.Sprintf("%s  %s\n", digest, filepath.Base(zipPath))), 0o644)
	}
	return zipPath, digest
}

func TestInitFetchesVerifiesAndStages(t *testing.T) {
	job := Job{TaskID: "upgrade-to-v0.2.0", TaskType: "upgrade", Node: "win-1"}
	for _, tc := range []struct {
		name    string
		publish func(t *testing.T, repo string) string // returns the job's digest
		version string
		want    string // "" success
	}{
		{"job digest", func(t *testing.T, repo string) string {
			_, d := publish(t, repo, linuxManifest("v0.2.0"), false)
			return "sha256:" + d
		}, "v0.2.0", ""},
		{"SHA256SUMS beside it", func(t *testing.T, repo string) string {
			publish(t, repo, linuxManifest("v0.2.0"), true)
			return ""
		}, "v0.2.0", ""},
		{"no checksum anywhere", func(t *testing.T, repo string) string {
			publish(t, repo, linuxManifest("v0.2.0"), false)
			return ""
		}, "v0.2.0", "the job gives no digest (spec.imageDigestGatter.value)"},
		{"digest of another file", func(t *testing.T, repo string) string {
			publish(t, repo, linuxManifest("v0.2.0"), false)
			return strings.Repeat("ab", 32)
		}, "v0.2.0", "not the expected"},
		{"not published", func(t *testing.T, repo string) string { return "" }, "v0.2.0", "edgecore-v0.2.0-linux-amd64.zip"},
		{"another version inside", func(t *testing.T, repo string) string {
			m := linuxManifest("v0.3.0")
			tmp := writeZip(t, filepath.Join(testdir.New(t, "upgrade-test-"), "b"), m, fakeELF())
			data, _ := os.ReadFile(tmp)
			os.WriteFile(filepath.Join(repo, "edgecore-v0.2.0-linux-amd64.zip"), data, 0o644)
			s := sha256.Sum256(data)
			return hex.EncodeToString(s[:])
		}, "v0.2.0", "holds edgecore v0.3.0 (KubeEdge v1.20.0), not the v0.2.0 the job asks for"},
		{"job names the KubeEdge version", func(t *testing.T, repo string) string {
			m := linuxManifest("v0.2.0")
			m.KubeEdge = "v1.21.0"
			tmp := writeZip(t, filepath.Join(testdir.New(t, "upgrade-test-"), "b"), m, fakeELF())
			data, _ := os.ReadFile(tmp)
			os.WriteFile(filepath.Join(repo, "edgecore-v1.21.0-linux-amd64.zip"), data, 0o644)
			s := sha256.Sum256(data)
			return hex.EncodeToString(s[:])
		}, "v1.21.0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js, ch, repo := realJobs(t)
			digest := tc.publish(t, repo)
			r, now := js.Init(Request{Job: job, Version: tc.version, Digest: digest})
			if now {
				t.Fatalf("Init answered at once: %+v", r)
			}
			s := waitSent(t, ch)
			if s.job != job || s.r.Event != "Init" {
				t.Fatalf("sent %+v", s)
			}
			if tc.want == "" {
				if !s.r.Success {
					t.Fatalf("failed: %s", s.r.Reason)
				}
				st, err := loadStaged(js.Env, tc.version)
				if err != nil || st.Manifest.Version != "v0.2.0" {
					t.Errorf("staged for %s: %+v %v", tc.version, st, err)
				}
				return
			}
			if s.r.Success || !strings.Contains(s.r.Reason, tc.want) {
				t.Errorf("reason %q, want %q", s.r.Reason, tc.want)
			}
			// A refused package leaves nothing it fetched or unpacked.
			left, _ := os.ReadDir(js.Env.Paths.Staging(tc.version))
			if len(left) != 0 {
				t.Errorf("the refusal left %v in %s", left, js.Env.Paths.Staging(tc.version))
			}
		})
	}
}

func TestInitEndsWithTheNodesContext(t *testing.T) {
	js, ch, repo := realJobs(t)
	publish(t, repo, linuxManifest("v0.2.0"), true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the node is stopping
	js.Context = func() context.Context { return ctx }
	if _, now := js.Init(Request{Job: Job{TaskID: "t"}, Version: "v0.2.0"}); now {
		t.Fatal("Init answered at once")
	}
	if s := waitSent(t, ch); s.r.Success || !strings.Contains(s.r.Reason, "context canceled") {
		t.Errorf("a fetch after the node stopped = %+v", s.r)
	}
}

func TestInitAnswersAtOnce(t *testing.T) {
	js, _, _ := realJobs(t)
	for _, tc := range []struct {
		req  Request
		want Report
	}{
		{Request{Version: "v0.1.0"}, Report{Event: "Upgrade", Success: true, Reason: "edgecore v0.1.0 runs already"}},
		{Request{Version: `..\..\Windows`}, Report{Event: "Init", Reason: `the NodeUpgradeJob's version "..\\..\\Windows" is not a semantic version such as v0.2.0: set spec.version to the release to install`}},
		{Request{Version: " v0.2.0"}, Report{Event: "Init", Reason: `the NodeUpgradeJob's version " v0.2.0" has spaces around it: give it as "v0.2.0": set spec.version to the release to install`}},
		{Request{Version: "v0.2.0", RequireConfirmation: true}, Report{Event: "Init"}},
	} {
		r, now := js.Init(tc.req)
		if !now || r.Event != tc.want.Event || r.Success != tc.want.Success || (tc.want.Reason != "" && r.Reason != tc.want.Reason) {
			t.Errorf("Init(%+v) = %+v, %v", tc.req, r, now)
		}
	}
	if r, _ := js.Init(Request{Version: "v0.2.0", RequireConfirmation: true}); !strings.Contains(r.Reason, "requireConfirmation is not supported by edgecore for Windows in operations/v1alpha1") {
		t.Errorf("confirmation: %q", r.Reason)
	}
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
