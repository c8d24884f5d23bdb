// Package hosttest is a fake Windows host for the tests of join and reset:
// its file system, service manager, clock, ACLs, container runtime and
// HNS, and an edgecore that behaves as the real one does once its service
// starts. Reset's tests start from a host join set up, so both suites
// drive join through this one host rather than each keeping its own.
package hosttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs/hostfstest"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/hns"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// sddlOf is the owner and DACL of path: SDDL's, the descriptor it was
// made with, or what a folder an administrator made in C:\ has.
func (w *World) sddlOf(path string) string {
	sddl, ok := w.SDDL[path]
	if !ok {
		sddl = w.Made[path]
	}
	switch {
	case sddl != "":
	case w.ClientEdition:
		// As an administrator made it in C:\ on Windows 10 or 11.
		sddl = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;ID;0x1301bf;;;AU)"
	default:
		// As an administrator made it in C:\: every user may read.
		sddl = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
	}
	return sddl
}

// Services is the service manager; it records each change in Calls.
type Services struct {
	// Services is nil: join and reset only install, start and delete
	// services, so Query, Stop and SetCommandLine, left to it, panic and
	// fail the test.
	deps.Services
	mu sync.Mutex
	// Configs are the installed services by name.
	Configs map[string]service.Config
	Running map[string]bool
	// Calls are the changes asked for, in order ("install edgecore").
	Calls        []string
	InstalledErr error
	InstallErr   error
	StartErr     error
	UninstallErr error
	// OnStart is what the started process does (EdgecoreIssues).
	OnStart func()
}

func (s *Services) Installed(name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.Configs[name]
	return ok, s.InstalledErr
}

func (s *Services) Install(c service.Config) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Calls = append(s.Calls, "install "+c.Name)
	if s.InstallErr != nil {
		return nil, s.InstallErr
	}
	if _, ok := s.Configs[c.Name]; ok {
		return nil, fmt.Errorf("install service %q: the service is %w", c.Name, service.ErrAlreadyInstalled)
	}
	s.Configs[c.Name] = c
	return nil, nil
}

func (s *Services) Start(name string) error {
	s.mu.Lock()
	s.Calls = append(s.Calls, "start "+name)
	onStart := s.OnStart
	if s.StartErr != nil {
		s.mu.Unlock()
		// The process may log before it dies.
		if onStart != nil {
			onStart()
		}
		return s.StartErr
	}
	s.Running[name] = true
	s.mu.Unlock()
	if onStart != nil {
		onStart()
	}
	return nil
}

func (s *Services) Uninstall(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Calls = append(s.Calls, "uninstall "+name)
	if s.UninstallErr != nil {
		return s.UninstallErr
	}
	if _, ok := s.Configs[name]; !ok {
		return fmt.Errorf("uninstall service %q: the service is %w", name, service.ErrNotInstalled)
	}
	delete(s.Configs, name)
	delete(s.Running, name)
	return nil
}

// Clock advances only when the code under test sleeps, and runs the
// events due by then: what edgecore does while join waits.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	events []event
	// Cancel, when set, is called once the clock passes CancelAt.
	Cancel   func()
	CancelAt time.Time
}

type event struct {
	at time.Time
	do func()
}

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Clock) After(d time.Duration, do func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, event{at: c.now.Add(d), do: do})
}

func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []event
	rest := c.events[:0]
	for _, e := range c.events {
		if !e.at.After(c.now) {
			due = append(due, e)
		} else {
			rest = append(rest, e)
		}
	}
	c.events = rest
	cancel := c.Cancel
	if cancel != nil && !c.now.Before(c.CancelAt) {
		c.Cancel = nil
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

// World is a Windows host with everything join and reset touch.
type World struct {
	T        *testing.T
	Host     config.Host
	FS       *hostfstest.FS
	Services *Services
	Clock    *Clock
	// Elevated and ElevErr are the answer to whether the process runs
	// as an elevated Administrator.
	Elevated bool
	ElevErr  error
	// Reach is cloudcore's answer at each address (nil: it answers);
	// Reached are the addresses tried.
	Reach   map[string]error
	Reached []string
	// ACL are the roots restricted; ACLErr fails restricting.
	ACL    []string
	ACLErr error
	// SDDL is the owner and DACL of a path, as Windows prints them; a
	// path without one is as an administrator made it in C:\, or as join
	// created it (Made).
	SDDL map[string]string
	// Made is the descriptor each directory join created was given.
	Made map[string]string
	// Links gives a file more than one name (hard links).
	Links map[string]uint32
	// ACLRecord, when set, is where protect keeps its record of the
	// folders the node restricted (protect.Host.Record), a file of FS;
	// Restored are the folders given their ACL back, with it.
	ACLRecord string
	Restored  []string
	// ClientEdition makes C:\ what it is on client editions of Windows:
	// what is created in it with its ACL lets Authenticated Users
	// modify it.
	ClientEdition bool
	// RemovedToken are the configurations whose token was blanked.
	RemovedToken []string
	// CRIUp is a container runtime answering without a containerd
	// service.
	CRIUp bool
	// CRIServer, when set, is who serves the CRI pipe: every CRI call
	// is judged by servertrust's rule over these facts first (a user's
	// CRI server started before join, say).
	CRIServer *servertrust.Facts
	// Imports are the image imports join asked for ("endpoint dirs"),
	// with whether the service was installed then; ImportErr fails them.
	Imports   []string
	ImportErr error
	// HNS is the pod network's HNS (PodNetHost).
	HNS *HNS
}

// DepsHost is a Windows host on C: for the commands' options.
var DepsHost = config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "10.20.30.40", SystemDrive: "C:"}

// Deps is host's dependencies with the test binary as the program.
func Deps(host config.Host) *deps.Dependencies {
	exe, err := os.Executable()
	return &deps.Dependencies{Host: host, Layout: config.NewLayout(host), Executable: exe, ExecutableErr: err}
}

// NewWorld is a Windows host named LINE3-PC, as a fresh install has it,
// with an elevated process and a cloudcore that answers.
func NewWorld(t *testing.T) *World {
	return &World{
		T:        t,
		Host:     config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "10.20.30.40"},
		FS:       hostfstest.New(config.Windows),
		Services: &Services{Configs: map[string]service.Config{}, Running: map[string]bool{}},
		Clock:    &Clock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		Elevated: true,
		Reach:    map[string]error{},
		Made:     map[string]string{},
	}
}

var tokenLine = regexp.MustCompile(`(?m)^(\s*token:).*$`)

// System is the host as join and reset act on it.
func (w *World) System() join.System {
	s := w.system0()
	s.Runtime = w.RuntimeHost()
	s.PodNet = w.PodNetHost()
	return s
}

func (w *World) system0() join.System {
	return join.System{
		FS: w.FS,
		Reach: func(addr string) error {
			w.Reached = append(w.Reached, addr)
			return w.Reach[addr]
		},
		Elevated: func() (bool, error) { return w.Elevated, w.ElevErr },
		WriteConfig: func(path string, data []byte) error {
			if w.FS.Has(path) {
				return fmt.Errorf("%s already exists: pass --force to replace it", path)
			}
			if !w.FS.Has(ospath.Dir(config.Windows, path)) {
				return hostfstest.NotExist("open", path)
			}
			w.FS.AddFile(path, string(data))
			w.FS.Record("write %s", path)
			return nil
		},
		LoadConfig: func(path string) (*v1alpha2.EdgeCoreConfig, error) {
			raw, err := w.FS.ReadFile(path)
			if err != nil {
				return nil, err
			}
			c, err := config.Parse(raw, w.Host)
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
			w.RemovedToken = append(w.RemovedToken, path)
			w.FS.AddFile(path, tokenLine.ReplaceAllString(w.FS.Content(path), `$1 ""`))
			return nil
		},
		Protect: protect.Host{
			Read: func(path string) (acl.Security, error) {
				if !w.FS.Has(path) {
					return acl.Security{}, hostfstest.NotExist("read", path)
				}
				return acl.ParseSDDL(w.sddlOf(path))
			},
			List: func(dir string) ([]acl.Entry, error) {
				entries, err := w.FS.ReadDir(dir)
				if err != nil {
					return nil, err
				}
				var out []acl.Entry
				for _, e := range entries {
					p := ospath.Join(config.Windows, dir, e.Name())
					sec, err := acl.ParseSDDL(w.sddlOf(p))
					if err != nil {
						return nil, err
					}
					links := w.Links[p]
					if links == 0 {
						links = 1
					}
					link := e.Type()&fs.ModeSymlink != 0
					out = append(out, acl.Entry{Name: e.Name(), Dir: e.IsDir() || link, Security: sec, Links: links, Reparse: link, ID: p})
				}
				return out, nil
			},
			Record:   w.ACLRecord,
			ReadFile: w.FS.ReadFile,
			WriteFile: func(path string, data []byte) error {
				return w.FS.WriteFile(path, data)
			},
			SDDL: func(path string) (string, error) { return w.sddlOf(path), nil },
			SetSDDL: func(path, sddl string) error {
				w.Restored = append(w.Restored, path+" "+sddl)
				w.SDDL[path] = sddl
				return nil
			},
			Restrict: func(root string, _ func(string) bool) error {
				w.ACL = append(w.ACL, root)
				w.FS.Record("restrict %s", root)
				return w.ACLErr
			},
			Exists: func(path string) (bool, error) { return w.FS.Has(path), nil },
			Mkdir: func(path, sddl string) error {
				if err := w.FS.Mkdir(path); err != nil {
					return err
				}
				w.Made[path] = sddl
				return nil
			},
		},
		Services: w.Services,
		Clock:    w.Clock,
		ImportImages: func(_ context.Context, out io.Writer, endpoint string, dirs []string) error {
			w.Imports = append(w.Imports, fmt.Sprintf("%s %s service installed: %v", endpoint, strings.Join(dirs, ";"), len(w.Services.Configs) > 0))
			fmt.Fprintln(out, "imported nothing: fake")
			return w.ImportErr
		},
	}
}

// RuntimeHost is the bundled runtime's view of the same host: its files
// in the fake file system, the same services, and a CRI that answers once
// the containerd service runs (or always, with criUp).
func (w *World) RuntimeHost() runtimeinstall.Host {
	sys := w.system0()
	return runtimeinstall.Host{
		Exists:  sys.Protect.Exists,
		Protect: sys.Protect,
		CopyNew: func(src, dst string) error {
			data, err := w.FS.ReadFile(src)
			if err != nil {
				return err
			}
			if w.FS.Has(dst) {
				return fmt.Errorf("%s exists", dst)
			}
			w.FS.AddFile(dst, string(data))
			return nil
		},
		WriteNew: func(p string, data []byte) error {
			if w.FS.Has(p) {
				return fmt.Errorf("%s exists", p)
			}
			if !w.FS.Has(ospath.Dir(config.Windows, p)) {
				return hostfstest.NotExist("open", p)
			}
			w.FS.AddFile(p, string(data))
			return nil
		},
		Remove:   w.FS.Remove,
		ReadFile: w.FS.ReadFile,
		Services: w.Services,
		CRI: func(ctx context.Context, endpoint string) (hostprobe.CRIStatus, error) {
			if w.CRIServer != nil {
				if err := servertrust.Judge(servertrust.Runtime, *w.CRIServer); err != nil {
					return hostprobe.CRIStatus{}, err
				}
			}
			w.Services.mu.Lock()
			up := w.CRIUp || w.Services.Running[runtimeinstall.ServiceName]
			w.Services.mu.Unlock()
			if !up {
				return hostprobe.CRIStatus{}, fmt.Errorf("cannot connect: open %s: the system cannot find the file specified", endpoint)
			}
			return hostprobe.CRIStatus{RuntimeName: "containerd", RuntimeVersion: "v2.1.4", RuntimeAPIVersion: "v1"}, nil
		},
		Clock: w.Clock,
	}
}

// Paths of a default Windows join.
const (
	CfgFile  = `C:\etc\kubeedge\config\edgecore.yaml`
	CAFile   = `C:\etc\kubeedge\ca\rootCA.crt`
	CertFile = `C:\etc\kubeedge\certs\server.crt`
	KeyFile  = `C:\etc\kubeedge\certs\server.key`
	DBFile   = `C:\var\lib\kubeedge\edgecore.db`
	LogFile  = `C:\var\log\kubeedge\edgecore.log`
	// PanicFile is where the service's standard error goes.
	PanicFile = `C:\var\log\kubeedge\panic.log`
	Exe       = `C:\Program Files\edgecore\edgecore.exe`
	// A token of the shape `keadm gettoken` prints.
	Token       = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e.eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJlLW9mLXRoZS1qb2luLXRva2Vu"
	TokenSecret = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJlLW9mLXRoZS1qb2luLXRva2Vu"
)

// klog lines as upstream edgehub writes them.
const (
	LogLineConnected = "I0102 03:04:09.000000    4321 websocket.go:93] Websocket connect to cloud access successful\n"
	// PanicRefused is how KubeEdge v1.23 reports a refused token.
	PanicRefused   = "panic: failed to apply the edge certs, err: failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure\n\ngoroutine 94 [running]:\ngithub.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate.(*CertManager).Start(0xc000a1c000)"
	LogLineRefused = "F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure, err: signature is invalid\n"
	LogLineWrongCA = "F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to validate CA certificate. tokenCAhash: 3f6e, CAhash: 9a9a\n"
	LogLineNoHub   = "E0102 03:04:08.000000    4321 edgehub.go:105] connection failed: dial tcp 192.168.50.10:10000: i/o timeout, will reconnect after 30s\n"
)

// Options are a default join of this host to a cloudcore at
// 192.168.50.10:10000.
func (w *World) Options() join.Options {
	return join.Options{
		JoinOptions: config.JoinOptions{
			CloudCoreIPPort: "192.168.50.10:10000",
			Token:           Token,
			Labels:          []string{"site=plant-1"},
		},
		ConfigFile: CfgFile,
		Executable: Exe,
		LogFile:    LogFile,
		Timeout:    2 * time.Minute,
		Host:       w.Host,
		Layout:     config.NewLayout(w.Host),
		Network:    join.NetworkOptions(&deps.Dependencies{Host: w.Host, Layout: config.NewLayout(w.Host)}),
	}
}

// EdgecoreIssues makes the started service behave like edgecore whose
// token is accepted: certificates after 2 s, the token blanked by edgecore
// itself if blanks is set, and the hub connected after 4 s.
func (w *World) EdgecoreIssues(blanks bool) {
	w.Services.OnStart = func() {
		w.Clock.After(2*time.Second, func() {
			w.FS.AddFile(CAFile, "CA")
			w.FS.AddFile(CertFile, "CERT")
			w.FS.AddFile(KeyFile, "KEY")
			w.FS.AddFile(DBFile, "DB")
			if blanks {
				w.FS.AddFile(CfgFile, tokenLine.ReplaceAllString(w.FS.Content(CfgFile), `$1 ""`))
			}
		})
		w.Clock.After(4*time.Second, func() { w.FS.AppendFile(LogFile, LogLineConnected) })
	}
}

// EdgecoreLogs makes the started service log line after 2 s, as edgecore
// does before exiting when its token is refused.
// EdgecorePanics is what KubeEdge v1.23's certificate manager does when
// the token gets it no certificates: it panics, and the Go runtime writes
// the panic to standard error, which the service sends to panic.log.
func (w *World) EdgecorePanics(panicText string) {
	w.Services.OnStart = func() {
		w.Clock.After(2*time.Second, func() {
			w.FS.AddFile(DBFile, "DB")
			w.FS.AppendFile(LogFile, "I0102 03:04:06.000000    4321 certmanager.go:80] Reuse the token to obtain the certificate\n")
			w.FS.AddFile(PanicFile, panicText)
		})
	}
}

func (w *World) EdgecoreLogs(line string) {
	w.Services.OnStart = func() {
		w.Clock.After(2*time.Second, func() {
			w.FS.AddFile(DBFile, "DB")
			w.FS.AppendFile(LogFile, "I0102 03:04:06.000000    4321 certmanager.go:79] unable to get the current edge certs\n"+line)
		})
	}
}

// The pod network's files on a default Windows host.
const (
	CNIConfDir   = CtrdDir + `\cni\conf`
	CNIL2Bridge  = CNIConfDir + `\` + cni.L2BridgeFileName
	CNINetRecord = CtrdDir + `\edgecore-cni-config.json`
	CNIBinDir    = CtrdDir + `\cni\bin`
	// CNINAT is where cni-config, and join, write a nat network.
	CNINAT = CNIConfDir + `\0-containerd-nat.conf`
)

// HNS records the HNS calls of an l2bridge network; Fail, when set,
// is the answer to every call (Wine's, or a host without the Containers
// feature).
type HNS struct {
	Calls     []string
	Networks  map[string]*hns.Network
	Endpoints map[string]*hns.Endpoint
	// LBs and Remote are what the node's proxier programmed: load
	// balancers, and the remote endpoints (by ID) among Endpoints.
	LBs    []hns.LoadBalancer
	Remote map[string]bool
	Fail   error
}

func (h *HNS) call(format string, args ...any) error {
	h.Calls = append(h.Calls, fmt.Sprintf(format, args...))
	return h.Fail
}

func (h *HNS) NetworkByName(name string) (*hns.Network, error) {
	if err := h.call("NetworkByName %s", name); err != nil {
		return nil, err
	}
	return h.Networks[name], nil
}
func (h *HNS) CreateNetwork(s hns.NetworkSpec) (*hns.Network, error) {
	if err := h.call("CreateNetwork %s %s on %s", s.Name, s.Subnet, s.Adapter); err != nil {
		return nil, err
	}
	n := &hns.Network{ID: "net-1", Name: s.Name, Type: s.Type, Adapter: s.Adapter, Subnets: []hns.Subnet{{Prefix: s.Subnet, Gateway: s.Gateway}}}
	h.Networks[s.Name] = n
	return n, nil
}
func (h *HNS) DeleteNetwork(id string) error {
	for name, n := range h.Networks {
		if n.ID == id {
			delete(h.Networks, name)
		}
	}
	return h.call("DeleteNetwork %s", id)
}
func (h *HNS) EndpointByName(name string) (*hns.Endpoint, error) {
	if err := h.call("EndpointByName %s", name); err != nil {
		return nil, err
	}
	return h.Endpoints[name], nil
}
func (h *HNS) CreateEndpoint(networkID string, s hns.EndpointSpec) (*hns.Endpoint, error) {
	if err := h.call("CreateEndpoint %s %s", s.Name, s.IP); err != nil {
		return nil, err
	}
	e := &hns.Endpoint{ID: "ep-1", Name: s.Name, NetworkID: networkID, IP: s.IP}
	h.Endpoints[s.Name] = e
	return e, nil
}
func (h *HNS) AttachHost(id string) error { return h.call("AttachHost %s", id) }
func (h *HNS) DeleteEndpoint(id string) error {
	for name, e := range h.Endpoints {
		if e.ID == id {
			delete(h.Endpoints, name)
		}
	}
	return h.call("DeleteEndpoint %s", id)
}
func (h *HNS) Forwarding(a netip.Addr) (hns.Interface, error) {
	return hns.Interface{Name: "vEthernet (" + a.String() + ")", Forwarding: true}, h.call("Forwarding %s", a)
}
func (h *HNS) EnableForwarding(a netip.Addr) error { return h.call("EnableForwarding %s", a) }
func (h *HNS) LoadBalancers() ([]hns.LoadBalancer, error) {
	return append([]hns.LoadBalancer(nil), h.LBs...), h.call("LoadBalancers")
}
func (h *HNS) DeleteLoadBalancer(id string) error {
	for i, lb := range h.LBs {
		if lb.ID == id {
			h.LBs = append(h.LBs[:i], h.LBs[i+1:]...)
			break
		}
	}
	return h.call("DeleteLoadBalancer %s", id)
}
func (h *HNS) NetworkEndpoints(networkID string) ([]hns.NetworkEndpoint, error) {
	var out []hns.NetworkEndpoint
	for _, e := range h.Endpoints {
		if e.NetworkID == networkID {
			out = append(out, hns.NetworkEndpoint{Endpoint: *e, Remote: h.Remote[e.ID]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, h.call("NetworkEndpoints %s", networkID)
}

// PodNetHost is the fake host's network: one adapter with the node's
// address, and the fake HNS.
func (w *World) PodNetHost() join.PodNetHost {
	if w.HNS == nil {
		w.HNS = &HNS{Networks: map[string]*hns.Network{}, Endpoints: map[string]*hns.Endpoint{}}
	}
	acls := w.system0().Protect
	return join.PodNetHost{
		Facts: podnet.HostFacts{
			Resolvers: func() ([]string, error) { return []string{"10.20.0.1"}, nil },
			Networks: func() ([]cni.HostNetwork, error) {
				return []cni.HostNetwork{{Interface: "Ethernet", Address: netip.MustParsePrefix("10.20.30.40/16")}}, nil
			},
			Adapters: func() ([]string, error) { return []string{"Ethernet"}, nil },
			RouteIP:  func() (net.IP, error) { return net.ParseIP("10.20.30.40"), nil },
			PodCIDR: func(string, config.Host) (string, error) {
				w.T.Error("join asked for the node's pod range from its database")
				return "", fmt.Errorf("no database")
			},
		},
		Env: podnet.Env{HNS: w.HNS, FS: w.FS, Protect: &acls, Now: w.Clock.Now},
	}
}

// WithL2Bridge gives join the quick start's network flags.
func WithL2Bridge(o join.Options) join.Options {
	o.Network.Subnet = "10.244.2.0/24"
	o.Network.L2Bridge.ClusterCIDR = "10.244.0.0/16"
	o.Network.L2Bridge.ServiceCIDR = "10.96.0.0/12"
	o.Network.DNS = []string{"10.96.0.10"}
	return o
}

// Where the release's runtime lies beside Exe (the release's folder), and where join puts it.
const (
	Bundle        = `C:\Program Files\edgecore\runtime`
	CtrdDir       = `C:\Program Files\containerd`
	CtrdExe       = CtrdDir + `\bin\containerd.exe`
	CtrdConfig    = CtrdDir + `\config.toml`
	CNIBridge     = CtrdDir + `\cni\bin\win-bridge.exe`
	InstallRecord = CtrdDir + `\installed-by-edgecore.json`
)

// WithBundle puts the runtime in the release folder, as the zip has it.
func (w *World) WithBundle() {
	for _, f := range runtimeinstall.Files {
		w.FS.AddFile(Bundle+`\`+f.Sub+`\`+f.Name, "MZ "+f.Name)
	}
	w.FS.AddFile(Bundle+`\manifest.json`, `{"containerd": "v2.1.4", "hcsshim": "v0.13.0", "cni-plugins": "v1.10.0"}`)
	w.FS.AddDir(`C:\Program Files`)
	w.FS.AddDir(`C:\ProgramData`)
}

// Where containerd keeps its data, and join creates it.
const (
	CtrdData  = `C:\ProgramData\containerd`
	CtrdRoot  = CtrdData + `\root`
	CtrdState = CtrdData + `\state`
)

// JoinStepNames are the step lines of a default join.
var JoinStepNames = []string{
	"[1/9] validate inputs",
	"[2/9] check Administrator",
	"[3/9] check for an earlier installation",
	"[4/9] create directories",
	"[5/9] restrict access",
	"[6/9] write the configuration",
	"[7/9] import image archives",
	"[8/9] install and start the service",
	"[9/9] wait for certificates and the hub connection",
}

// StepLines are the "[i/n] name" lines of the output, in order.
func StepLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[") {
			lines = append(lines, l)
		}
	}
	return lines
}

// MustContain fails the test for each of wants that text lacks; what
// names text in the message.
func MustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not contain %q:\n%s", what, want, text)
		}
	}
}

// StepError fails the test unless err is a *steps.StepError at step index
// of total, and returns it.
func StepError(t *testing.T, err error, index, total int) *steps.StepError {
	t.Helper()
	var se *steps.StepError
	if !errors.As(err, &se) {
		t.Fatalf("want a *steps.StepError, got %v", err)
	}
	if se.Index != index || se.Total != total {
		t.Fatalf("failed at step %d/%d (%s), want step %d/%d:\n%v", se.Index, se.Total, se.Step, index, total, err)
	}
	return se
}

// UserCRIServer is a CRI server a local account started on containerd's
// pipe before the node: process 6120, C:\Users\alice\fakecri.exe, running
// as alice, on a pipe with go-winio's default descriptor, which alice
// owns; the containerd service is not installed.
func UserCRIServer() *servertrust.Facts {
	const alice = "S-1-5-21-1004336348-1177238915-682003330-1001"
	return &servertrust.Facts{
		GOOS:    config.Windows,
		Address: `\\.\pipe\containerd-containerd`,
		Server: pipe.Server{PID: 6120, UID: -1,
			SDDL: "O:" + alice + "D:(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;" + alice + ")(A;;FR;;;WD)(A;;FR;;;AN)"},
		Process:      proc.Identity{PID: 6120, Account: alice, AccountName: `LINE3-PC\alice`, Image: `C:\Users\alice\fakecri.exe`},
		ServiceState: "not installed",
		SelfPID:      4321,
	}
}
