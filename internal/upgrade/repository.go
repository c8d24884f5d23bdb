package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/release"
)

// SettingsFile holds the operator's upgrade settings for NodeUpgradeJobs,
// beside the node's configuration (C:\etc\kubeedge\config\upgrade.yaml).
//
// Why a file of its own: edgecore's configuration is upstream's v1alpha2
// EdgeCoreConfig, which refuses unknown fields, so it cannot carry one
// without patching upstream's API. A NodeUpgradeJob's spec.image cannot
// carry a URL either: cloudcore parses it as a container image reference
// and appends the version as a tag. And a node annotation could be set
// from the cloud side, or by the node itself, while the repository decides
// which binary runs as SYSTEM: it belongs to the host's administrators, in
// the directory join restricts to them.
const SettingsFile = "upgrade.yaml"

// versionPlaceholder is replaced by the version a NodeUpgradeJob asks for.
const versionPlaceholder = "{version}"

// Settings are the operator's upgrade settings.
type Settings struct {
	// Repository locates a release zip by version: an https:// URL or an
	// absolute path, a file share included, with {version} in it, e.g.
	// \\fileserver\edgecore\edgecore-{version}-windows-amd64.zip. Not
	// http://: without a digest in the job, the checksum comes from the
	// same place as the zip, and anyone on the path could answer both.
	Repository string `json:"repository"`
	// HealthTimeout bounds the health gate of upgrades from the cloud
	// (default 3m). The job's timeoutSeconds must exceed it by the time a
	// service stop and start take.
	HealthTimeout string `json:"healthTimeout,omitempty"`
}

// SettingsPath is the settings file beside configFile.
func SettingsPath(goos, configFile string) string {
	return ospath.Join(goos, ospath.Dir(goos, configFile), SettingsFile)
}

// LoadSettings reads and checks the settings beside configFile, once
// their owner and who may change them are judged (Env.TrustSettings):
// they are read at every NodeUpgradeJob, long after the start that
// judged the node's folders.
func LoadSettings(e Env, configFile string) (Settings, error) {
	p := SettingsPath(e.GOOS, configFile)
	var s Settings
	noSettings := fmt.Errorf("no package repository is configured for NodeUpgradeJobs: write %s with a line such as "+
		`repository: "\\fileserver\edgecore\edgecore-{version}-windows-amd64.zip" (or an https:// URL)`, p)
	if ok, err := hostfs.Exists(e.FS, p); err == nil && !ok {
		return s, noSettings
	}
	if e.TrustSettings != nil {
		if err := e.TrustSettings(p); err != nil {
			return s, err
		}
	}
	raw, err := e.FS.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return s, noSettings
	}
	if err != nil {
		return s, err
	}
	// Windows PowerShell 5.1's Out-File and ">" write UTF-16.
	if raw, err = config.DecodeText(raw); err != nil {
		return s, fmt.Errorf("%s: %w", p, err)
	}
	if err := yaml.UnmarshalStrict(raw, &s); err != nil {
		return s, fmt.Errorf("%s: %v: the fields are repository and healthTimeout", p, err)
	}
	if err := s.validate(e.GOOS); err != nil {
		return s, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

func (s Settings) validate(goos string) error {
	if !strings.Contains(s.Repository, versionPlaceholder) {
		return fmt.Errorf("repository %q has no %s, so every version would be fetched from the same place: write it where the version goes, e.g. https://repo.example/edgecore/edgecore-{version}-windows-amd64.zip",
			redact.URL(s.Repository), versionPlaceholder)
	}
	sample := strings.ReplaceAll(s.Repository, versionPlaceholder, "v0.0.0")
	if strings.ContainsAny(sample, "{}") {
		return fmt.Errorf("repository %q: only {version} is replaced", redact.URL(s.Repository))
	}
	if isURL(sample) {
		u, err := url.Parse(sample)
		if err != nil || u.Host == "" {
			return fmt.Errorf("repository %q is not a valid http(s) URL: %v", redact.URL(s.Repository), redactErr(err))
		}
		if err := requireHTTPS(u, "repository"); err != nil {
			return err
		}
	} else if !ospath.IsAbs(goos, sample) {
		return fmt.Errorf("repository %q is neither an http(s) URL nor an absolute path (C:\\..., \\\\server\\share\\...): the service does not run in any particular directory", redact.URL(s.Repository))
	}
	if s.HealthTimeout != "" {
		d, err := time.ParseDuration(s.HealthTimeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("healthTimeout %q is not a duration such as 3m", s.HealthTimeout)
		}
	}
	return nil
}

// Timeout is the health gate's bound.
func (s Settings) Timeout() time.Duration {
	if d, err := time.ParseDuration(s.HealthTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

// Location is where the package of version is.
func (s Settings) Location(version string) string {
	return strings.ReplaceAll(s.Repository, versionPlaceholder, version)
}

// requireHTTPS refuses a URL that is not https: the package it names
// becomes the binary the service runs as SYSTEM, and over http anyone on
// the path may answer with another, and with the SHA256SUMS that vouch
// for it.
func requireHTTPS(u *url.URL, field string) error {
	if strings.EqualFold(u.Scheme, "https") {
		return nil
	}
	return fmt.Errorf("%s %q uses %s://, which anyone between this node and the server can answer with another package: "+
		"publish the packages over https:// (or on a file share, \\\\server\\share\\...) and write that in %s's %s field",
		field, redact.URL(u.String()), u.Scheme, SettingsFile, field)
}

func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// baseName is the file name at the end of a location.
func baseName(goos, loc string) string {
	if isURL(loc) {
		if u, err := url.Parse(loc); err == nil {
			if p, err := url.PathUnescape(path.Base(u.Path)); err == nil {
				return p
			}
		}
	}
	d := ospath.Dir(goos, loc)
	return strings.TrimLeft(loc[len(d):], `\/`)
}

// sumsBeside is the SHA256SUMS in the same directory as loc.
func sumsBeside(goos, loc string) string {
	if isURL(loc) {
		u, err := url.Parse(loc)
		if err == nil {
			u.Path = path.Join(path.Dir(u.Path), release.SumsFile)
			u.RawPath, u.RawQuery, u.Fragment = "", "", ""
			return u.String()
		}
	}
	return ospath.Join(goos, ospath.Dir(goos, loc), release.SumsFile)
}

// Download bounds. A package is about 25 MiB; a slow site link moves it
// in minutes.
const (
	// FetchTimeout bounds one download, connection to last byte; from a
	// folder or a share, the open and every read (Fetcher.open,
	// ctxReader).
	FetchTimeout = 15 * time.Minute
	// MaxSumsBytes bounds a SHA256SUMS file.
	MaxSumsBytes = 1 << 20
	// maxRedirects is as many as Go's client follows by default.
	maxRedirects = 10
)

// Fetcher copies files from a package repository, within bounds.
type Fetcher struct {
	// Client makes the https requests; nil is one with the host's
	// certificate roots. Its redirect policy is replaced by one that
	// never leaves https.
	Client *http.Client
	// Timeout bounds each download; zero is FetchTimeout.
	Timeout time.Duration
	// Open opens a file of a repository that is a path (a folder or a
	// share); nil is os.Open.
	Open func(path string) (io.ReadCloser, error)
}

// Fetch copies the file at loc (an https URL or a path, a share
// included) to dst, at most limit bytes of it, within the fetcher's
// timeout and ctx. The service runs as LocalSystem, which reaches a share
// as the computer's domain account (DOMAIN\HOST$). A partial file is
// never left at dst. Messages name loc without the credentials a URL may
// carry (redact.URL).
func (f Fetcher) Fetch(ctx context.Context, loc, dst string, limit int64) error {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = FetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	shown := redact.URL(loc)
	var body io.ReadCloser
	announced := int64(-1)
	if isURL(loc) {
		u, err := url.Parse(loc)
		if err != nil {
			return fmt.Errorf("fetch %s: %w", shown, redactErr(err))
		}
		if err := requireHTTPS(u, "repository"); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return fmt.Errorf("fetch %s: %w", shown, redactErr(err))
		}
		resp, err := f.client().Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("fetch %s: %w", shown, ended(ctx, timeout))
			}
			return fmt.Errorf("fetch %s: %w", shown, redactErr(err))
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("fetch %s: the server answered %s: check the repository in %s and that the version is published", shown, resp.Status, SettingsFile)
		}
		if resp.ContentLength > limit {
			resp.Body.Close()
			return fmt.Errorf("fetch %s: the server announces %d bytes, more than the %d such a file may be: check the repository in %s", shown, resp.ContentLength, limit, SettingsFile)
		}
		body, announced = resp.Body, resp.ContentLength
	} else {
		file, err := f.open(ctx, loc)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("fetch %s: opening it: %w", shown, ended(ctx, timeout))
			}
			return fmt.Errorf("fetch %s: %w (a share must let this computer's account read it)", shown, err)
		}
		body = file
	}
	// Closing the file also ends a read that the deadline abandoned
	// (ctxReader), where the system lets a close end it.
	defer body.Close()
	src := &ctxReader{ctx: ctx, r: body}
	if err := hostfs.WriteDurable(dst, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(src, limit+1))
		switch {
		case ctx.Err() != nil:
			// A connection ended by the timeout may read as a clean
			// end of the body: what came is not the whole file.
			err = fmt.Errorf("ended after %d bytes: %w", n, ended(ctx, timeout))
		case err != nil:
		case n > limit:
			err = fmt.Errorf("it holds more than the %d bytes such a file may be: check the repository in %s", limit, SettingsFile)
		case announced >= 0 && n != announced:
			err = fmt.Errorf("the server announced %d bytes and sent %d: fetch it again", announced, n)
		}
		return err
	}); err != nil {
		return fmt.Errorf("fetch %s to %s: %w", shown, dst, redactErr(err))
	}
	return nil
}

// ended says why a download's context ended: its time bound, or the
// caller (the node shutting down).
func ended(ctx context.Context, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("not done within the download's time bound of %v (%w): check that the repository answers, then try again", timeout, ctx.Err())
	}
	return ctx.Err()
}

// open opens the file at loc within ctx. Opening a file on a share that
// stopped answering blocks in the system, where no context reaches, for
// as long as the SMB client waits: the open goes on in the background,
// and a file it opens after ctx ended is closed.
func (f Fetcher) open(ctx context.Context, loc string) (io.ReadCloser, error) {
	open := f.Open
	if open == nil {
		open = func(p string) (io.ReadCloser, error) {
			file, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			return file, nil
		}
	}
	type opened struct {
		rc  io.ReadCloser
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		rc, err := open(loc)
		ch <- opened{rc, err}
	}()
	select {
	case o := <-ch:
		return o.rc, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.err == nil {
				o.rc.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// client is the fetcher's client with a redirect policy that refuses to
// leave https: a redirect to http:// would hand the package to whoever
// is on the path after all.
func (f Fetcher) client() *http.Client {
	c := &http.Client{}
	if f.Client != nil {
		cp := *f.Client
		c = &cp
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !strings.EqualFold(req.URL.Scheme, "https") {
			return fmt.Errorf("refusing the redirect from %s to %s, which is not https: publish the packages where no redirect leaves https",
				redact.URL(via[len(via)-1].URL.String()), redact.URL(req.URL.String()))
		}
		return nil
	}
	return c
}

// ctxReader ends a copy when ctx ends, in the middle of a Read that does
// not return too. A read from a share that stopped answering blocks in
// the system, where no context reaches, for as long as the SMB client
// waits, which can be far longer than the download's time bound. Each
// Read runs on a goroutine of its own into a buffer of its own; when ctx
// ends first, Read returns ctx's error and leaves that goroutine to end
// when the file is closed (Fetch closes it on its way out) or the read
// comes back by itself. Once ctx has ended every Read fails at once, so
// the abandoned buffer is never read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	type read struct {
		n   int
		err error
	}
	ch := make(chan read, 1)
	go func() {
		n, err := c.r.Read(buf)
		ch <- read{n, err}
	}()
	select {
	case r := <-ch:
		return copy(p, buf[:r.n]), r.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}

// redactErr takes the credentials out of the URLs net/http and net/url
// put in their errors (*url.Error): they name the URL they were given,
// user name and all.
func redactErr(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if ue, ok := e.(*url.Error); ok {
			ue.URL = redact.URL(ue.URL)
		}
	}
	return err
}
