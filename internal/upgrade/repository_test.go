package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// secrets are the credentials the tests put in repository URLs; no
// message or log line may show any of them.
var secrets = []string{"alice", "s3cr3t-pw", "t0ken"}

func mustNotShowSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s shows the credential %q: %s", what, s, text)
		}
	}
}

func TestSettingsErrorsNeverShowCredentials(t *testing.T) {
	h := newHost(newBin)
	e := h.env(1, "v0.1.0")
	cfg := `C:\etc\kubeedge\config\edgecore.yaml`
	for _, repo := range []string{
		"http://alice:s3cr3t-pw@repo.example/edgecore-{version}.zip?sig=t0ken",
		"https://alice:s3cr3t-pw@repo.example/edgecore.zip?sig=t0ken",
		"https://alice:s3cr3t-pw@repo.example/{name}-{version}.zip?sig=t0ken",
		"https://alice:s3cr3t-pw@repo.example:port/edgecore-{version}.zip?sig=t0ken",
		"ftp://alice:s3cr3t-pw@repo.example/edgecore-{version}.zip?sig=t0ken",
	} {
		h.fs.put(`C:\etc\kubeedge\config\upgrade.yaml`, []byte("repository: '"+repo+"'\n"))
		_, err := LoadSettings(e, cfg)
		if err == nil {
			t.Errorf("%s was accepted", repo)
			continue
		}
		if !strings.Contains(err.Error(), "***@repo.example") {
			t.Errorf("%s: %v does not name the repository without its credentials", repo, err)
		}
		mustNotShowSecrets(t, "the settings error", err.Error())
	}
}

// withCredentials puts user, password and a signed query into an https
// URL of a test server.
func withCredentials(serverURL, path string) string {
	return strings.Replace(serverURL, "https://", "https://alice:s3cr3t-pw@", 1) + path + "?sig=t0ken"
}

func TestFetchErrorsNeverShowCredentials(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved.zip" {
			http.Redirect(w, r, withCredentials(strings.Replace(plain.URL, "http://", "https://", 1), "/x.zip"), http.StatusFound)
			return
		}
		if r.URL.Path == "/insecure.zip" {
			http.Redirect(w, r, strings.Replace(plain.URL, "http://", "http://alice:s3cr3t-pw@", 1)+"/x.zip?sig=t0ken", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	closed := httptest.NewTLSServer(http.NotFoundHandler())
	closed.Close()
	dst := filepath.Join(testdir.New(t, "upgrade-test-"), "p.zip")
	f := Fetcher{Client: srv.Client(), Timeout: 10 * time.Second}
	for what, loc := range map[string]string{
		"a 404":                           withCredentials(srv.URL, "/edgecore-v0.2.0.zip"),
		"a redirect to http":              withCredentials(srv.URL, "/insecure.zip"),
		"a redirect to a TLS-less server": withCredentials(srv.URL, "/moved.zip"),
		"a server that does not answer":   withCredentials(closed.URL, "/edgecore-v0.2.0.zip"),
		"a server without TLS":            withCredentials(strings.Replace(plain.URL, "http://", "https://", 1), "/x.zip"),
		"an http repository":              strings.Replace(plain.URL, "http://", "http://alice:s3cr3t-pw@", 1) + "/x.zip?sig=t0ken",
		"a URL that does not parse":       "https://alice:s3cr3t-pw@[::1/x.zip?sig=t0ken",
	} {
		err := f.Fetch(context.Background(), loc, dst, 100)
		if err == nil {
			t.Errorf("%s: fetched", what)
			continue
		}
		if !strings.Contains(err.Error(), "***@") {
			t.Errorf("%s: %v does not name the repository", what, err)
		}
		mustNotShowSecrets(t, what, err.Error())
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

// stuckFile is a file on a share that stopped answering: Read returns
// what it has, then blocks. With endsOnClose a Close ends the blocked
// read, as closing the handle does on Windows; without, not even that.
type stuckFile struct {
	data        string
	endsOnClose bool
	closed      chan struct{}
	closeOnce   sync.Once
	forever     chan struct{}
}

func newStuckFile(data string, endsOnClose bool) *stuckFile {
	return &stuckFile{data: data, endsOnClose: endsOnClose, closed: make(chan struct{}), forever: make(chan struct{})}
}

func (f *stuckFile) Read(p []byte) (int, error) {
	if f.data != "" {
		n := copy(p, f.data)
		f.data = f.data[n:]
		return n, nil
	}
	if f.endsOnClose {
		<-f.closed
		return 0, errors.New("the handle was closed")
	}
	<-f.forever
	return 0, io.EOF
}

func (f *stuckFile) Close() error {
	f.closeOnce.Do(func() { close(f.closed) })
	return nil
}

// A read from a share that hangs is abandoned when the download's time
// bound passes; the file is closed and nothing is left at dst.
func TestFetchAbandonsAReadThatHangs(t *testing.T) {
	for _, endsOnClose := range []bool{true, false} {
		file := newStuckFile("zip", endsOnClose)
		defer close(file.forever)
		dir := filepath.Join(testdir.New(t, "upgrade-test-"), "staging dir")
		os.MkdirAll(dir, 0o755)
		dst := filepath.Join(dir, "p.zip")
		f := Fetcher{Timeout: 100 * time.Millisecond, Open: func(string) (io.ReadCloser, error) { return file, nil }}
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- f.Fetch(context.Background(), `\\files\edge core\edgecore-v0.2.0.zip`, dst, 100) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("endsOnClose %v: the fetch still hangs after 10s", endsOnClose)
		}
		if err == nil || !strings.Contains(err.Error(), "ended after 3 bytes: not done within the download's time bound of 100ms") ||
			!errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("endsOnClose %v: Fetch = %v after %v", endsOnClose, err, time.Since(start))
		}
		select {
		case <-file.closed:
		default:
			t.Errorf("endsOnClose %v: the file was not closed", endsOnClose)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("endsOnClose %v: left %v", endsOnClose, left)
		}
	}
}

// Opening a file on a share that does not answer is abandoned too; a file
// that opens after all is closed.
func TestFetchAbandonsAnOpenThatHangs(t *testing.T) {
	release := make(chan struct{})
	file := newStuckFile("zip", true)
	f := Fetcher{Timeout: 100 * time.Millisecond, Open: func(string) (io.ReadCloser, error) {
		<-release
		return file, nil
	}}
	dst := filepath.Join(testdir.New(t, "upgrade-test-"), "p.zip")
	done := make(chan error, 1)
	go func() { done <- f.Fetch(context.Background(), `\\files\edge core\edgecore-v0.2.0.zip`, dst, 100) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `fetch \\files\edge core\edgecore-v0.2.0.zip: opening it: not done within the download's time bound of 100ms`) {
			t.Errorf("Fetch = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch still hangs after 10s")
	}
	close(release)
	select {
	case <-file.closed:
	case <-time.After(10 * time.Second):
		t.Error("the file that opened after the deadline was not closed")
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("a file was written")
	}
}
