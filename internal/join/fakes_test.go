package join

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs/hostfstest"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// fakeServices is the service manager.
type fakeServices struct {
	// Services is nil: join and reset only install, start and delete
	// services, so Query, Stop and SetCommandLine, left to it, panic and
	// fail the test.
	deps.Services
	mu           sync.Mutex
	installed    map[string]service.Config
	running      map[string]bool
	calls        []string
	installedErr error
	installErr   error
	startErr     error
	uninstallErr error
	onStart      func()
}

func (s *fakeServices) Installed(name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.installed[name]
	return ok, s.installedErr
}

func (s *fakeServices) Install(c service.Config) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "install "+c.Name)
	if s.installErr != nil {
		return nil, s.installErr
	}
	if _, ok := s.installed[c.Name]; ok {
		return nil, fmt.Errorf("install service %q: the service is %w", c.Name, service.ErrAlreadyInstalled)
	}
	s.installed[c.Name] = c
	return nil, nil
}

func (s *fakeServices) Start(name string) error {
	s.mu.Lock()
	s.calls = append(s.calls, "start "+name)
	onStart := s.onStart
	if s.startErr != nil {
		s.mu.Unlock()
		// The process may log before it dies.
		if onStart != nil {
			onStart()
		}
		return s.startErr
	}
	s.running[name] = true
	s.mu.Unlock()
	if onStart != nil {
		onStart()
	}
	return nil
}

func (s *fakeServices) Uninstall(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "uninstall "+name)
	if s.uninstallErr != nil {
		return s.uninstallErr
	}
	if _, ok := s.installed[name]; !ok {
		return fmt.Errorf("uninstall service %q: the service is %w", name, service.ErrNotInstalled)
	}
	delete(s.installed, name)
	delete(s.running, name)
	return nil
}

// fakeClock advances only when the code under test sleeps, and runs the
// events due by then: what edgecore does while join waits.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	events []fakeEvent
	// cancel, when set, is called once the clock passes cancelAt.
	cancel   func()
	cancelAt time.Time
}

type fakeEvent struct {
	at time.Time
	do func()
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) after(d time.Duration, do func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, fakeEvent{at: c.now.Add(d), do: do})
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []fakeEvent
	rest := c.events[:0]
	for _, e := range c.events {
		if !e.at.After(c.now) {
			due = append(due, e)
		} else {
			rest = append(rest, e)
		}
	}
	c.events = rest
	cancel := c.cancel
	if cancel != nil && !c.now.Before(c.cancelAt) {
		c.cancel = nil
	} else {
		cancel = nil
	}
	c.mu.Unlock()
	for _, e := range due {
		e.do()
	}
	if cancel != nil {
		cancel()
	}
	return ctx.Err()
}

// world is a Windows host with everything join and reset touch.
type world struct {
	t        *testing.T
	host     config.Host
	fs       *hostfstest.FS
	services *fakeServices
	clock    *fakeClock
	elevated bool
	elevErr  error
	reach    map[string]error
	reached  []string
	acl      []string
	aclErr   error
	// sddl is the owner and DACL of a path, as Windows prints them; a
	// path without one is as an administrator made it in C:\, or as join
	// created it (made).
	sddl map[string]string
	// made is the descriptor each directory join created was given.
	made map[string]string
	// clientEdition makes C:\ what it is on client editions of Windows:
	// what is created in it with its ACL lets Authenticated Users
	// modify it.
	clientEdition bool
	removeTok     []string
	// criUp is a container runtime answering without a containerd
	// service.
	criUp bool
	// imports are the image imports join asked for ("endpoint dirs"),
	// with whether the service was installed then; importErr fails them.
	imports   []string
	importErr error
	// hns is the pod network's HNS (podNetHost).
	hns *fakeHNS
}

func newWorld(t *testing.T) *world {
	return &world{
		t:        t,
		host:     config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "10.20.30.40"},
		fs:       hostfstest.New(config.Windows),
		services: &fakeServices{installed: map[string]service.Config{}, running: map[string]bool{}},
		clock:    &fakeClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		elevated: true,
		reach:    map[string]error{},
		made:     map[string]string{},
	}
}

var tokenLine = regexp.MustCompile(`(?m)^(\s*token:).*$`)

func (w *world) system() System {
	s := w.system0()
	s.Runtime = w.runtimeHost()
	s.PodNet = w.podNetHost()
	return s
}

func (w *world) system0() System {
	return System{
		FS: w.fs,
		Reach: func(addr string) error {
			w.reached = append(w.reached, addr)
			return w.reach[addr]
		},
		Elevated: func() (bool, error) { return w.elevated, w.elevErr },
		WriteConfig: func(path string, data []byte) error {
			if w.fs.Has(path) {
				return fmt.Errorf("%s already exists: pass --force to replace it", path)
			}
			if !w.fs.Has(ospath.Dir(config.Windows, path)) {
				return hostfstest.NotExist("open", path)
			}
			w.fs.AddFile(path, string(data))
			w.fs.Record("write %s", path)
			return nil
		},
		LoadConfig: func(path string) (*v1alpha2.EdgeCoreConfig, error) {
			raw, err := w.fs.ReadFile(path)
			if err != nil {
				return nil, err
			}
			c, err := config.Parse(raw, w.host)
			if err != nil {
				return nil, fmt.Errorf("config file %s: %w", path, err)
			}
			config.Normalize(c, config.Windows)
			if errs := config.Validate(c, config.Windows); len(errs) > 0 {
				return nil, &config.InvalidError{What: "config file " + path, Errs: errs}
			}
			return c, nil
		},
		RemoveToken: func(path string) error {
			w.removeTok = append(w.removeTok, path)
			w.fs.AddFile(path, tokenLine.ReplaceAllString(w.fs.Content(path), `$1 ""`))
			return nil
		},
		Protect: protect.Host{
			Read: func(path string) (acl.Security, error) {
				if !w.fs.Has(path) {
					return acl.Security{}, hostfstest.NotExist("read", path)
				}
				sddl, ok := w.sddl[path]
				if !ok {
					sddl = w.made[path]
				}
				switch {
				case sddl != "":
				case w.clientEdition:
					// As an administrator made it in C:\ on Windows 10 or 11.
					sddl = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;ID;0x1301bf;;;AU)"
				default:
					// As an administrator made it in C:\: every user may read.
					sddl = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
				}
				return acl.ParseSDDL(sddl)
			},
			Restrict: func(root string) error {
				w.acl = append(w.acl, root)
				w.fs.Record("restrict %s", root)
				return w.aclErr
			},
			Exists: func(path string) (bool, error) { return w.fs.Has(path), nil },
			Mkdir: func(path, sddl string) error {
				if err := w.fs.Mkdir(path); err != nil {
					return err
				}
				w.made[path] = sddl
				return nil
			},
		},
		Services: w.services,
		Clock:    w.clock,
		ImportImages: func(_ context.Context, out io.Writer, endpoint string, dirs []string) error {
			w.imports = append(w.imports, fmt.Sprintf("%s %s service installed: %v", endpoint, strings.Join(dirs, ";"), len(w.services.installed) > 0))
			fmt.Fprintln(out, "imported nothing: fake")
			return w.importErr
		},
	}
}

// runtimeHost is the bundled runtime's view of the same host: its files
// in the fake file system, the same services, and a CRI that answers once
// the containerd service runs (or always, with criUp).
func (w *world) runtimeHost() runtimeinstall.Host {
	sys := w.system0()
	return runtimeinstall.Host{
		Exists:  sys.Protect.Exists,
		Protect: sys.Protect,
		CopyNew: func(src, dst string) error {
			data, err := w.fs.ReadFile(src)
			if err != nil {
				return err
			}
			if w.fs.Has(dst) {
				return fmt.Errorf("%s exists", dst)
			}
			w.fs.AddFile(dst, string(data))
			return nil
		},
		WriteNew: func(p string, data []byte) error {
			if w.fs.Has(p) {
				return fmt.Errorf("%s exists", p)
			}
			if !w.fs.Has(ospath.Dir(config.Windows, p)) {
				return hostfstest.NotExist("open", p)
			}
			w.fs.AddFile(p, string(data))
			return nil
		},
		Remove:   w.fs.Remove,
		ReadFile: w.fs.ReadFile,
		Services: w.services,
		CRI: func(ctx context.Context, endpoint string) (hostprobe.CRIStatus, error) {
			w.services.mu.Lock()
			up := w.criUp || w.services.running[runtimeinstall.ServiceName]
			w.services.mu.Unlock()
			if !up {
				return hostprobe.CRIStatus{}, fmt.Errorf("cannot connect: open %s: the system cannot find the file specified", endpoint)
			}
			return hostprobe.CRIStatus{RuntimeName: "containerd", RuntimeVersion: "v2.1.4", RuntimeAPIVersion: "v1"}, nil
		},
		Clock: w.clock,
	}
}

// Paths of a default Windows join.
const (
	cfgFile  = `C:\etc\kubeedge\config\edgecore.yaml`
	caFile   = `C:\etc\kubeedge\ca\rootCA.crt`
	certFile = `C:\etc\kubeedge\certs\server.crt`
	keyFile  = `C:\etc\kubeedge\certs\server.key`
	dbFile   = `C:\var\lib\kubeedge\edgecore.db`
	logFile  = `C:\var\log\kubeedge\edgecore.log`
	// panicFile is where the service's standard error goes.
	panicFile = `C:\var\log\kubeedge\panic.log`
	exe       = `C:\Program Files\edgecore\edgecore.exe`
	// A token of the shape `keadm gettoken` prints.
	testToken  = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e.eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJlLW9mLXRoZS1qb2luLXRva2Vu"
	testSecret = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJlLW9mLXRoZS1qb2luLXRva2Vu"
)

// klog lines as upstream edgehub writes them.
const (
	logLineConnected = "I0102 03:04:09.000000    4321 websocket.go:93] Websocket connect to cloud access successful\n"
	// panicRefused is how KubeEdge v1.23 reports a refused token.
	panicRefused   = "panic: failed to apply the edge certs, err: failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure\n\ngoroutine 94 [running]:\ngithub.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate.(*CertManager).Start(0xc000a1c000)"
	logLineRefused = "F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure, err: signature is invalid\n"
	logLineWrongCA = "F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to validate CA certificate. tokenCAhash: 3f6e, CAhash: 9a9a\n"
	logLineNoHub   = "E0102 03:04:08.000000    4321 edgehub.go:105] connection failed: dial tcp 192.168.50.10:10000: i/o timeout, will reconnect after 30s\n"
)

func (w *world) options() Options {
	return Options{
		JoinOptions: config.JoinOptions{
			CloudCoreIPPort: "192.168.50.10:10000",
			Token:           testToken,
			Labels:          []string{"site=plant-1"},
		},
		ConfigFile: cfgFile,
		Executable: exe,
		LogFile:    logFile,
		Timeout:    2 * time.Minute,
		Host:       w.host,
		Layout:     config.NewLayout(w.host),
		Network:    NetworkOptions(&deps.Dependencies{Host: w.host, Layout: config.NewLayout(w.host)}),
	}
}

// edgecoreIssues makes the started service behave like edgecore whose
// token is accepted: certificates after 2 s, the token blanked by edgecore
// itself if blanks is set, and the hub connected after 4 s.
func (w *world) edgecoreIssues(blanks bool) {
	w.services.onStart = func() {
		w.clock.after(2*time.Second, func() {
			w.fs.AddFile(caFile, "CA")
			w.fs.AddFile(certFile, "CERT")
			w.fs.AddFile(keyFile, "KEY")
			w.fs.AddFile(dbFile, "DB")
			if blanks {
				w.fs.AddFile(cfgFile, tokenLine.ReplaceAllString(w.fs.Content(cfgFile), `$1 ""`))
			}
		})
		w.clock.after(4*time.Second, func() { w.fs.AppendFile(logFile, logLineConnected) })
	}
}

// edgecoreLogs makes the started service log line after 2 s, as edgecore
// does before exiting when its token is refused.
// edgecorePanics is what KubeEdge v1.23's certificate manager does when
// the token gets it no certificates: it panics, and the Go runtime writes
// the panic to standard error, which the service sends to panic.log.
func (w *world) edgecorePanics(panicText string) {
	w.services.onStart = func() {
		w.clock.after(2*time.Second, func() {
			w.fs.AddFile(dbFile, "DB")
			w.fs.AppendFile(logFile, "I0102 03:04:06.000000    4321 certmanager.go:80] Reuse the token to obtain the certificate\n")
			w.fs.AddFile(panicFile, panicText)
		})
	}
}

func (w *world) edgecoreLogs(line string) {
	w.services.onStart = func() {
		w.clock.after(2*time.Second, func() {
			w.fs.AddFile(dbFile, "DB")
			w.fs.AppendFile(logFile, "I0102 03:04:06.000000    4321 certmanager.go:79] unable to get the current edge certs\n"+line)
		})
	}
}
