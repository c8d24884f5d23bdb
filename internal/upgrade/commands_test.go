package upgrade

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/pe"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

func TestConfigFlagFindsTheEqualsForm(t *testing.T) {
	if v, ok := configFlag([]string{"--log-file", "x", "--config=C:\\a b\\c.yaml"}); !ok || v != `C:\a b\c.yaml` {
		t.Errorf("--config=: %q %v", v, ok)
	}
}

func TestFindInstalled(t *testing.T) {
	h := newHost(newBin)
	e := h.env(1, "v0.1.0")
	in, err := FindInstalled(e, h.facts(), "edgecore")
	if err != nil {
		t.Fatal(err)
	}
	want := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db, Version: "v0.1.0"}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %+v\nwant %+v", in, want)
	}
	if _, err := FindInstalled(e, h.facts(), "other"); err == nil || !strings.Contains(err.Error(), "the service \"other\" is not installed") || !strings.Contains(err.Error(), "edgecore.exe join") {
		t.Errorf("not installed: %v", err)
	}
	h.svc.config = "edgecore.yaml"
	if _, err := FindInstalled(e, h.facts(), "edgecore"); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative configuration: %v", err)
	}
}

// fakeELF is the smallest file debug/elf reads as an x86-64 executable.
func fakeELF() []byte {
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	b.Write(make([]byte, 8))
	binary.Write(&b, binary.LittleEndian, struct {
		Type, Machine                                     uint16
		Version                                           uint32
		Entry, Phoff, Shoff                               uint64
		Flags                                             uint32
		Ehsize, Phentsize, Phnum, Shentsize, Shnum, Shstr uint16
	}{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: 1, Ehsize: 64})
	return b.Bytes()
}

func fakePE() []byte {
	var b bytes.Buffer
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40)
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	binary.Write(&b, binary.LittleEndian, pe.FileHeader{Machine: pe.IMAGE_FILE_MACHINE_AMD64})
	b.Write(make([]byte, 64))
	return b.Bytes()
}

// writeZip writes a release package as build/package.sh lays it out into
// dir (which has a space in its name) and returns its path.
func writeZip(t *testing.T, dir string, m release.Manifest, exe []byte) string {
	t.Helper()
	return writeZipWith(t, dir, m, exe, nil)
}

// writeZipWith is writeZip with more files (by their path in the zip's
// top folder), all listed in SHA256SUMS.
func writeZipWith(t *testing.T, dir string, m release.Manifest, exe []byte, extra map[string][]byte) string {
	t.Helper()
	mdata, _ := json.Marshal(m)
	files := map[string][]byte{m.Binary: exe, release.ManifestFile: mdata, "LICENSE": []byte("Apache License")}
	for n, d := range extra {
		files[n] = d
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var sums strings.Builder
	for _, n := range names {
		s := sha256.Sum256(files[n])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(s[:]), n)
	}
	files[release.SumsFile] = []byte(sums.String())
	names = append(names, release.SumsFile)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, _ := zw.Create(m.TopDir() + "/" + n)
		w.Write(files[n])
	}
	zw.Close()
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, m.TopDir()+".zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func linuxManifest(v string) release.Manifest {
	return release.Manifest{Name: "edgecore", Version: v, OS: "linux", Arch: "amd64", KubeEdge: "v1.20.0", Binary: "edgecore"}
}

// realEnv is a Linux host in a temporary directory with spaces in its
// paths: the package checks, the staging and the fetching work on real
// files.
func realEnv(t *testing.T) (Env, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		// make wine-test runs this package under Wine for its Windows
		// tests (runtime_windows_test.go).
		t.Skip("lays out a Linux host (its paths, package names and rules) on the real file system; the same code's Windows behaviour is proven over the Windows layout by the recording-fake tests, which run here too")
	}
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

func TestSettings(t *testing.T) {
	h := newHost(newBin)
	e := h.env(1, "v0.1.0")
	cfg := `C:\etc\kubeedge\config\edgecore.yaml`
	path := `C:\etc\kubeedge\config\upgrade.yaml`
	if got := SettingsPath(config.Windows, cfg); got != path {
		t.Errorf("SettingsPath %s", got)
	}
	if _, err := LoadSettings(e, cfg); err == nil || !strings.Contains(err.Error(), `write C:\etc\kubeedge\config\upgrade.yaml with a line such as repository:`) {
		t.Errorf("missing file: %v", err)
	}
	for _, tc := range []struct {
		text string
		want string
	}{
		{`repository: '\\files\edge core\edgecore-{version}-windows-amd64.zip'`, ""},
		{"repository: https://repo.example/edge%20core/edgecore-{version}-windows-amd64.zip\nhealthTimeout: 90s", ""},
		{"\xEF\xBB\xBFrepository: 'D:\\pkgs\\edgecore-{version}.zip'", ""},
		{"repository: https://repo.example/edgecore.zip", "has no {version}"},
		{"repository: pkgs/edgecore-{version}.zip", "neither an http(s) URL nor an absolute path"},
		{"repository: https://repo.example/{name}-{version}.zip", "only {version} is replaced"},
		{"repository: https:///x-{version}.zip", "not a valid http(s) URL"},
		{"repository: http://repo.example/edgecore-{version}.zip", "uses http://, which anyone between this node and the server can answer with another package"},
		{"repository: HTTP://repo.example/edgecore-{version}.zip", "publish the packages over https://"},
		{"repository: 'C:\\x-{version}.zip'\nhealthTimeout: soon", `healthTimeout "soon" is not a duration`},
		{"repository: 'C:\\x-{version}.zip'\nrepo: x", "the fields are repository and healthTimeout"},
		// What `"repository: 'D:\p\e-{version}.zip'" > upgrade.yaml` writes in Windows PowerShell 5.1.
		{utf16LE("repository: 'D:\\p\\e-{version}.zip'"), ""},
		{"\xFF\xFEr\x00x", "odd number of bytes"},
		{"repository: '\xC3\x28-{version}'", "neither UTF-8 nor UTF-16"},
	} {
		h.fs.put(path, []byte(tc.text))
		s, err := LoadSettings(e, cfg)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: got %v (%+v), want %q", tc.text, err, s, tc.want)
		}
	}
	s := Settings{Repository: `\\files\edge core\edgecore-{version}-windows-amd64.zip`}
	loc := s.Location("v0.2.0")
	if loc != `\\files\edge core\edgecore-v0.2.0-windows-amd64.zip` || baseName(config.Windows, loc) != "edgecore-v0.2.0-windows-amd64.zip" ||
		sumsBeside(config.Windows, loc) != `\\files\edge core\SHA256SUMS` || s.Timeout() != DefaultTimeout {
		t.Errorf("share: %s %s %s %v", loc, baseName(config.Windows, loc), sumsBeside(config.Windows, loc), s.Timeout())
	}
	u := Settings{Repository: "https://repo.example/edge%20core/edgecore-{version}.zip?sig=1", HealthTimeout: "90s"}
	loc = u.Location("v0.2.0")
	if baseName(config.Windows, loc) != "edgecore-v0.2.0.zip" || sumsBeside(config.Windows, loc) != "https://repo.example/edge%20core/SHA256SUMS" || u.Timeout() != 90*time.Second {
		t.Errorf("url: %s %s %v", baseName(config.Windows, loc), sumsBeside(config.Windows, loc), u.Timeout())
	}
}

func TestFetch(t *testing.T) {
	dir := filepath.Join(testdir.New(t, "upgrade-test-"), "package share")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "edgecore v0.2.0.zip"), []byte("zip bytes"), 0o644)
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	f := Fetcher{Client: srv.Client()}
	dst := filepath.Join(testdir.New(t, "upgrade-test-"), "staging dir", "p.zip")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	for _, loc := range []string{filepath.Join(dir, "edgecore v0.2.0.zip"), srv.URL + "/edgecore%20v0.2.0.zip"} {
		os.Remove(dst)
		if err := f.Fetch(context.Background(), loc, dst, 100); err != nil {
			t.Errorf("%s: %v", loc, err)
			continue
		}
		if b, _ := os.ReadFile(dst); string(b) != "zip bytes" {
			t.Errorf("%s: fetched %q", loc, b)
		}
	}
	if err := f.Fetch(context.Background(), srv.URL+"/edgecore-v9.zip", dst, 100); err == nil || !strings.Contains(err.Error(), "404 Not Found: check the repository in upgrade.yaml") {
		t.Errorf("404: %v", err)
	}
	if err := f.Fetch(context.Background(), filepath.Join(dir, "none.zip"), dst, 100); err == nil || !strings.Contains(err.Error(), "a share must let this computer's account read it") {
		t.Errorf("missing file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Fetch(ctx, filepath.Join(dir, "edgecore v0.2.0.zip"), dst+"2", 100); err == nil {
		t.Error("a cancelled fetch succeeded")
	}
}

func TestFetchRefusesHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("fetched %s over http", r.URL)
	}))
	defer srv.Close()
	dst := filepath.Join(testdir.New(t, "upgrade-test-"), "p.zip")
	err := Fetcher{}.Fetch(context.Background(), srv.URL+"/edgecore-v0.2.0.zip", dst, 100)
	if err == nil || !strings.Contains(err.Error(), "uses http://") || !strings.Contains(err.Error(), "upgrade.yaml's repository field") {
		t.Errorf("http fetch = %v", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("a file was written")
	}
}

func TestFetchRefusesARedirectToHTTP(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("followed the redirect to http: %s", r.URL)
		w.Write([]byte("another package"))
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/evil.zip", http.StatusFound))
	defer secure.Close()
	dst := filepath.Join(testdir.New(t, "upgrade-test-"), "p.zip")
	err := Fetcher{Client: secure.Client()}.Fetch(context.Background(), secure.URL+"/edgecore-v0.2.0.zip", dst, 100)
	if err == nil || !strings.Contains(err.Error(), "refusing the redirect from "+secure.URL+"/edgecore-v0.2.0.zip to "+plain.URL+"/evil.zip, which is not https") {
		t.Errorf("redirect = %v", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("a file was written")
	}
}

func TestFetchStopsAtTheLimit(t *testing.T) {
	big := strings.Repeat("x", 1000)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			// No Content-Length: only the copy can stop it.
			w.(http.Flusher).Flush()
		}
		w.Write([]byte(big))
	}))
	defer srv.Close()
	f := Fetcher{Client: srv.Client()}
	dir := testdir.New(t, "upgrade-test-")
	for _, path := range []string{"/announced", "/chunked"} {
		dst := filepath.Join(dir, strings.TrimPrefix(path, "/")+".zip")
		err := f.Fetch(context.Background(), srv.URL+path, dst, 999)
		if err == nil || !strings.Contains(err.Error(), "999") {
			t.Errorf("%s: %v, want a refusal naming the limit", path, err)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%s: a file was left at %s", path, dst)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("partial files left: %v", left)
	}
	share := filepath.Join(dir, "share.zip")
	os.WriteFile(share, []byte(big), 0o644)
	if err := f.Fetch(context.Background(), share, filepath.Join(dir, "out.zip"), 999); err == nil {
		t.Error("a file over the limit was copied from a share")
	}
}

func TestFetchTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("slow"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	err := Fetcher{Client: srv.Client(), Timeout: 200 * time.Millisecond}.Fetch(context.Background(), srv.URL+"/p.zip", filepath.Join(testdir.New(t, "upgrade-test-"), "p.zip"), 100)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("a stalled download = %v after %v, want it ended by the timeout", err, time.Since(start))
	}
}

// utf16LE is s as Windows PowerShell 5.1 writes text files: UTF-16
// little-endian after a byte-order mark.
func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
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
