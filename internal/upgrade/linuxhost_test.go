//go:build !windows

package upgrade

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// The tests of this file lay out a Linux host (its paths, package names
// and rules) in a temporary folder of the real file system: the package
// checks, the staging and the fetching on real files. They are built for
// Linux only: under Wine (make wine-test runs this package) the Windows
// layout is the one that runs, on real files in runtime_windows_test.go
// and over the recording fakes everywhere else.

func linuxManifest(v string) release.Manifest {
	return release.Manifest{Name: "edgecore", Version: v, OS: "linux", Arch: "amd64", KubeEdge: "v1.20.0", Binary: "edgecore"}
}

// realEnv is a Linux host in a temporary directory with spaces in its
// paths: the package checks, the staging and the fetching work on real
// files.
func realEnv(t *testing.T) (Env, string) {
	t.Helper()
	root := filepath.Join(testdir.New(t, "upgrade-test-"), "host root")
	l := config.NewLayout(config.Host{GOOS: "linux"})
	p := NewPaths(l)
	for _, f := range []*string{&p.KubeEdgeDir, &p.BackupRoot, &p.StateDir, &p.Journal, &p.Health, &p.LogFile, &p.NodeLogFile} {
		*f = filepath.Join(root, *f)
	}
	return Env{
		GOOS: "linux", Paths: p, FS: hostfs.OS{}, Service: "edgecore", Clock: clock.Real{},
		Restrict: func(string) error { return nil }, PID: os.Getpid(), Version: "v0.1.0",
	}, root
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestStagePackage(t *testing.T) {
	e, root := realEnv(t)
	dir := filepath.Join(root, "my downloads")
	target := release.Target{OS: "linux", Arch: "amd64", Installed: "v0.1.0"}
	good := writeZip(t, dir, linuxManifest("v0.2.0"), fakeELF())
	var out bytes.Buffer
	st, err := stagePackage(e, good, "", target, nil, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if st.Binary != filepath.Join(e.Paths.Staging("v0.2.0"), "edgecore") || st.Manifest.Version != "v0.2.0" {
		t.Errorf("staged %+v", st)
	}
	if again, err := loadStaged(e, "v0.2.0"); err != nil || again.SHA256 != st.SHA256 {
		t.Errorf("loadStaged: %+v %v", again, err)
	}
	wantLines(t, out.String(), "SHA256SUMS: 3 files match", "edgecore v0.2.0 for linux/amd64 (KubeEdge v1.20.0)", "staged ")
	os.WriteFile(st.Binary, []byte("changed"), 0o755)
	if _, err := loadStaged(e, "v0.2.0"); err == nil || !strings.Contains(err.Error(), "changed after it was verified") {
		t.Errorf("a changed staged binary: %v", err)
	}

	zipSum, _ := release.FileSHA256(good)
	for _, tc := range []struct {
		name   string
		path   string
		digest string
		target release.Target
		want   string
	}{
		{"digest matches", good, "sha256:" + zipSum, target, ""},
		{"digest differs", good, "sha256:" + strings.Repeat("0", 64), target, "not the expected"},
		{"other os", writeZip(t, filepath.Join(root, "w"), release.Manifest{Name: "edgecore", Version: "v0.2.0", OS: "windows", Arch: "amd64", Binary: "edgecore.exe"}, fakePE()), "", target,
			"for windows/amd64, and this host is linux/amd64"},
		{"other arch", writeZip(t, filepath.Join(root, "a"), release.Manifest{Name: "edgecore", Version: "v0.2.0", OS: "linux", Arch: "arm64", Binary: "edgecore"}, fakeELF()), "", target,
			"for linux/arm64"},
		{"binary of another arch", writeZip(t, filepath.Join(root, "b"), release.Manifest{Name: "edgecore", Version: "v0.3.0", OS: "linux", Arch: "amd64", Binary: "edgecore"}, fakePE()), "", target,
			"not an ELF executable"},
		{"older", writeZip(t, filepath.Join(root, "o"), linuxManifest("v0.0.9"), fakeELF()), "", target, "older than the installed v0.1.0: pass --allow-downgrade"},
		{"same", writeZip(t, filepath.Join(root, "s"), linuxManifest("v0.1.0"), fakeELF()), "", target, "installed already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stagePackage(e, tc.path, tc.digest, tc.target, nil, &bytes.Buffer{})
			if tc.want == "" {
				if err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			// The one refused after its binary was unpacked leaves
			// neither the binary nor a record of it.
			if tc.name == "binary of another arch" {
				for _, f := range []string{"edgecore", stagedFile} {
					if p := filepath.Join(e.Paths.Staging("v0.3.0"), f); exists(p) {
						t.Errorf("the refused package left %s", p)
					}
				}
			}
		})
	}
}

// The upgrade command refuses before it changes anything.
func TestUpgradeCommandRefusals(t *testing.T) {
	_, root := realEnv(t)
	win := func(v, arch string) release.Manifest {
		return release.Manifest{Name: "edgecore", Version: v, OS: "windows", Arch: arch, KubeEdge: "v1.20.0", Binary: "edgecore.exe"}
	}
	dir := filepath.Join(root, "pkgs with spaces")
	newer := writeZip(t, filepath.Join(dir, "1"), win("v0.2.0", "amd64"), fakePE())
	notZip := filepath.Join(dir, "not a zip.zip")
	os.WriteFile(notZip, []byte("MZ"), 0o644)
	for _, tc := range []struct {
		name string
		o    UpgradeOptions
		want string
		code int
	}{
		{"no package", UpgradeOptions{Timeout: time.Minute}, "--package: Required value", 1},
		{"no timeout", UpgradeOptions{Package: newer}, "--timeout: Invalid value", 1},
		{"bad digest flag", UpgradeOptions{Package: newer, Timeout: time.Minute, SHA256: "md5:x"}, "--sha256: Invalid value", 1},
		{"wrong digest", UpgradeOptions{Package: newer, Timeout: time.Minute, SHA256: strings.Repeat("1", 64)}, "not the expected", 1},
		{"arm64", UpgradeOptions{Package: writeZip(t, filepath.Join(dir, "2"), win("v0.2.0", "arm64"), fakePE()), Timeout: time.Minute}, "for windows/arm64, and this host is windows/amd64", 1},
		{"older", UpgradeOptions{Package: writeZip(t, filepath.Join(dir, "3"), win("v0.0.9", "amd64"), fakePE()), Timeout: time.Minute}, "--allow-downgrade", 1},
		{"same", UpgradeOptions{Package: writeZip(t, filepath.Join(dir, "4"), win("v0.1.0", "amd64"), fakePE()), Timeout: time.Minute}, "installed already", 0},
		{"damaged", UpgradeOptions{Package: filepath.Join(dir, "missing.zip"), Timeout: time.Minute}, "missing.zip does not exist: give the path of the edgecore-", 1},
		{"not a zip", UpgradeOptions{Package: notZip, Timeout: time.Minute}, "cannot read it as a zip", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(newBin)
			tc.o.Service = "edgecore"
			var out bytes.Buffer
			r := Upgrade(context.Background(), &out, h.env(900, "v0.1.0"), h.facts(), tc.o)
			if !strings.Contains(r.Reason, tc.want) || r.ExitCode() != tc.code {
				t.Errorf("%s (exit %d), want %q (exit %d)\n%s", r.Line(), r.ExitCode(), tc.want, tc.code, out.String())
			}
			h.must(t, h.exe, oldBin)
			if h.svc.st.State != service.Running {
				t.Error("the service was stopped")
			}
			if j, _ := loadJournal(h.env(1, "")); j != nil {
				t.Errorf("a journal was written: %+v", j)
			}
		})
	}
}

func TestRollbackToRefusesAPath(t *testing.T) {
	e, _ := realEnv(t)
	for _, to := range []string{`..\..\Windows`, "../../etc", "v0.1.0/../../x", " v0.1.0", "C:v0.1.0"} {
		_, _, err := chooseBackup(e, "v0.2.0", to)
		if err == nil || !strings.Contains(err.Error(), "--to") || !strings.Contains(err.Error(), "give the version of a backup in") {
			t.Errorf("--to %q: %v", to, err)
		}
	}
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

// The NodeUpgradeJob's log lines and its report to the cloud name the
// repository without its credentials.
func TestJobFetchNeverShowsCredentials(t *testing.T) {
	js, _, repo := realJobs(t)
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(repo)))
	defer srv.Close()
	os.WriteFile(SettingsPath("linux", js.ConfigFile), []byte("repository: '"+withCredentials(srv.URL, "/edgecore-{version}-linux-amd64.zip")+"'\n"), 0o644)
	js.Fetch = Fetcher{Client: srv.Client()}.Fetch
	var mu sync.Mutex
	var logged []string
	js.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, strings.TrimSpace(strings.ReplaceAll(format, "%s", "")))
		for _, a := range args {
			if s, ok := a.(string); ok {
				logged = append(logged, s)
			}
		}
	}
	// Not published yet: the fetch fails.
	err := js.Stage(context.Background(), Request{Job: Job{TaskID: "t"}, Version: "v0.2.0"})
	if err == nil {
		t.Fatal("staged a package that is not published")
	}
	mustNotShowSecrets(t, "the job's error", err.Error())
	// Published, but it holds another version.
	tmp := writeZip(t, filepath.Join(testdir.New(t, "upgrade-test-"), "b"), linuxManifest("v0.3.0"), fakeELF())
	data, _ := os.ReadFile(tmp)
	os.WriteFile(filepath.Join(repo, "edgecore-v0.2.0-linux-amd64.zip"), data, 0o644)
	s := sha256.Sum256(data)
	err = js.Stage(context.Background(), Request{Job: Job{TaskID: "t"}, Version: "v0.2.0", Digest: hex.EncodeToString(s[:])})
	if err == nil || !strings.Contains(err.Error(), "holds edgecore v0.3.0") || !strings.Contains(err.Error(), "https://***@127.0.0.1") {
		t.Fatalf("another version inside = %v", err)
	}
	mustNotShowSecrets(t, "the job's error", err.Error())
	mu.Lock()
	defer mu.Unlock()
	if len(logged) == 0 {
		t.Fatal("nothing was logged")
	}
	mustNotShowSecrets(t, "the job's log", strings.Join(logged, "\n"))
}

// realRuntimeEnv is realEnv with containerd's folders in its root, and
// containerd v1 installed there, recorded as join's when byJoin.
func realRuntimeEnv(t *testing.T, byJoin bool) (Env, string) {
	t.Helper()
	e, root := realEnv(t)
	l := config.NewLayout(config.Host{GOOS: "linux"})
	for _, f := range []*string{&l.ContainerdDir, &l.ContainerdConfigFile, &l.CNIBinDir, &l.CNIConfDir} {
		*f = filepath.Join(root, *f)
	}
	e.Runtime = RuntimeEnv{Layout: l, CRI: func(context.Context, string) (hostprobe.CRIStatus, error) {
		return hostprobe.CRIStatus{}, errors.New("not asked when staging")
	}}
	rec := runtimeinstall.Record{Service: runtimeinstall.ServiceName, Versions: rtOld}
	for _, f := range runtimeinstall.Files {
		p := f.Target(l)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(rtContent(f, pkgSame)), 0o755); err != nil {
			t.Fatal(err)
		}
		rec.Files = append(rec.Files, p)
	}
	if byJoin {
		data, _ := rec.Encode()
		os.WriteFile(runtimeinstall.RecordFile(l), data, 0o644)
	}
	return e, root
}

// runtimeZip is a v0.2.0 package carrying the runtime pkg, or only n of
// its programs.
func runtimeZip(t *testing.T, dir, pkg string, n int) string {
	t.Helper()
	extra := map[string][]byte{}
	for i, f := range runtimeinstall.Files {
		if i < n {
			extra[f.PackagePath()] = []byte(rtContent(f, pkg))
		}
	}
	v, _ := json.Marshal(rtNew)
	extra[runtimeinstall.BundleDir+"/"+runtimeinstall.ManifestFile] = v
	return writeZipWith(t, dir, linuxManifest("v0.2.0"), fakeELF(), extra)
}

func TestStagePackageUnpacksTheRuntimeOnlyWhenTheHostNeedsIt(t *testing.T) {
	target := release.Target{OS: "linux", Arch: "amd64", Installed: "v0.1.0"}
	in := Installed{Service: "edgecore", ConfigFile: "/etc/kubeedge/config/edgecore.yaml", Version: "v0.1.0"}
	facts := Facts{CRIEndpoint: func(string) (string, error) { return criPipe, nil }}
	for _, tc := range []struct {
		name     string
		byJoin   bool
		pkg      string
		unpacked bool
		planned  bool
		wantNote string
	}{
		{"a new runtime over join's", true, pkgNew, true, true, "is replaced by the package's"},
		{"the same runtime", true, pkgSame, false, false, "containerd is not restarted"},
		{"the operator's runtime", false, pkgNew, false, false, "the host's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, root := realRuntimeEnv(t, tc.byJoin)
			zip := runtimeZip(t, filepath.Join(root, "downloads"), tc.pkg, len(runtimeinstall.Files))
			var out bytes.Buffer
			st, err := stagePackage(e, zip, "", target, nil, &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if st.Runtime == nil || st.Runtime.Versions["containerd"] != rtNew["containerd"] || len(st.Runtime.Sums) != len(runtimeinstall.Files) {
				t.Fatalf("staged runtime %+v", st.Runtime)
			}
			containerd := filepath.Join(e.Paths.Staging("v0.2.0"), "runtime", "containerd", "containerd.exe")
			if exists(containerd) != tc.unpacked || (st.Runtime.Dir != "") != tc.unpacked {
				t.Errorf("unpacked %v (dir %q), want %v", exists(containerd), st.Runtime.Dir, tc.unpacked)
			}
			again, err := loadStaged(e, "v0.2.0")
			if err != nil {
				t.Fatal(err)
			}
			rs, note, err := planRuntime(e, facts, in, again)
			if err != nil || (rs != nil) != tc.planned || !strings.Contains(note, tc.wantNote) {
				t.Errorf("plan %+v %q %v, want planned %v and %q", rs, note, err, tc.planned, tc.wantNote)
			}
			if tc.unpacked {
				os.WriteFile(containerd, []byte("changed"), 0o755)
				if _, err := loadStaged(e, "v0.2.0"); err == nil || !strings.Contains(err.Error(), "changed after it was verified") {
					t.Errorf("a changed staged runtime program: %v", err)
				}
			}
		})
	}
	t.Run("part of a runtime", func(t *testing.T) {
		e, root := realRuntimeEnv(t, true)
		zip := runtimeZip(t, filepath.Join(root, "downloads"), pkgNew, 4)
		_, err := stagePackage(e, zip, "", target, nil, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "folder has 4 of the 6 programs of the container runtime") {
			t.Errorf("got %v", err)
		}
	})
}
