package node

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// wiringLog records what Run wired, in order.
type wiringLog struct {
	calls   []string
	handler func(string, any, []byte)
	agent   *fakeAgent
	deps    *deps.Dependencies
	config  string
}

type fakeAgent struct {
	log     *wiringLog
	watched bool
}

func (a *fakeAgent) Watch(context.Context) {
	a.watched = true
	a.log.calls = append(a.log.calls, "watch upgrades")
}

func (w *wiringLog) wiring() Wiring {
	return Wiring{
		PanicHandler: func(h func(string, any, []byte)) {
			w.handler = h
			w.calls = append(w.calls, "panic handler")
		},
		UpgradeAgent: func(_ context.Context, d *deps.Dependencies, _ *v1alpha2.EdgeCoreConfig, configFile string) Agent {
			w.deps, w.config = d, configFile
			w.agent = &fakeAgent{log: w}
			w.calls = append(w.calls, "upgrade agent")
			return w.agent
		},
		Services: func(_ *v1alpha2.EdgeCoreConfig, d *deps.Dependencies) {
			if d != w.deps {
				w.calls = append(w.calls, "services without the dependencies")
				return
			}
			w.calls = append(w.calls, "services")
		},
		Register: func(_ *v1alpha2.EdgeCoreConfig, _ string, a Agent, _ string) {
			if a != Agent(w.agent) {
				w.calls = append(w.calls, "register without the agent")
				return
			}
			w.calls = append(w.calls, "register")
		},
		WatchConfig: func(configFile string, create func(string) (*os.File, error)) {
			if create == nil {
				w.calls = append(w.calls, "watch "+configFile+" without a creator of private files")
				return
			}
			w.calls = append(w.calls, "watch "+configFile)
		},
		RunBus: func(context.Context) { w.calls = append(w.calls, "run") },
	}
}

// services is a service manager that no test expects to be asked: a
// console node does not look at its service.
type services struct{ deps.Services }

func (services) Query(string) (service.Status, error) { return service.Status{}, nil }

// runDeps are the dependencies of a node on this OS whose files are in
// dir, with probes that find the container runtime answering and ACLs
// that find every path already there and restricted.
func runDeps(dir string) *deps.Dependencies {
	host := config.Host{GOOS: runtime.GOOS, Hostname: "edge-1", NodeIP: "192.0.2.7"}
	l := config.NewLayout(host)
	l.KubeEdgeDir = filepath.Join(dir, "kubeedge")
	l.ConfigFile = filepath.Join(l.KubeEdgeDir, "edgecore.yaml")
	l.ImagesDir = filepath.Join(l.KubeEdgeDir, config.ImagesDirName)
	l.ImagesRecord = filepath.Join(l.KubeEdgeDir, "images-imported.json")
	l.LogDir = filepath.Join(dir, "log")
	l.LogFile = filepath.Join(l.LogDir, "edgecore.log")
	return &deps.Dependencies{
		Host:   host,
		Layout: l,
		Probes: hostprobe.Set{CRI: func(context.Context, string) (hostprobe.CRIStatus, error) {
			return hostprobe.CRIStatus{RuntimeName: "containerd"}, nil
		}},
		Clock: clock.Real{},
		ACLs: protect.Host{
			Exists:   func(string) (bool, error) { return true, nil },
			Read:     func(string) (acl.Security, error) { return acl.ParseSDDL(acl.DirectorySDDL) },
			List:     func(string) ([]acl.Entry, error) { return nil, nil },
			Restrict: func(string, func(string) bool) error { return nil },
			Mkdir:    func(string, string) error { return nil },
			CreateFile: func(p string) (*os.File, error) {
				return os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
			},
			Self: acl.SystemSID,
		},
		Services:   services{},
		Executable: filepath.Join(dir, "bin", "edgecore"),
	}
}

// writeConfig writes the sample configuration of d's host with a join
// token, the database in dir, and returns its path.
func writeConfig(t *testing.T, d *deps.Dependencies, dir string) string {
	t.Helper()
	c, err := config.Sample(config.KindDefault, d.Host)
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.EdgeHub.Token = strings.Repeat("a", 64) + ".eyJh.eyJi.c2ln"
	c.DataBase.DataSource = filepath.Join(dir, "edgecore.db")
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := d.Layout.ConfigFile
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Run wires the node before its modules start: the panic hook first (a
// module that panics in Start must end the node through klog's exit hook,
// which a service reports as a stop), the upgrade agent, made from the
// node's dependencies and configuration, registered with the modules and
// watching the journal, and the watch of the configuration that blanks
// the join token once the certificates are issued. Each fails this test
// when Run leaves it out.
func TestRunWiresTheUpgradeAgentTheConfigWatchAndThePanicHook(t *testing.T) {
	dir := t.TempDir()
	d := runDeps(dir)
	opts := Options{ConfigFile: writeConfig(t, d, dir), SkipEnvironmentCheck: true, Host: d.Host}
	if err := opts.MemoryLimit.Set("off"); err != nil {
		t.Fatal(err)
	}
	var w wiringLog
	if err := Run(context.Background(), opts, d, w.wiring()); err != nil {
		t.Fatal(err)
	}

	// The second panic handler knows the join token, which it keeps
	// out of what a panic prints.
	want := []string{"panic handler", "watch " + opts.ConfigFile, "panic handler", "upgrade agent", "services", "register", "watch upgrades", "run"}
	if strings.Join(w.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("Run wired\n  %s\nwant\n  %s", strings.Join(w.calls, "\n  "), strings.Join(want, "\n  "))
	}
	if w.agent == nil || !w.agent.watched {
		t.Error("the upgrade agent does not watch the upgrade journal")
	}
	if w.deps != d || w.config != opts.ConfigFile {
		t.Errorf("the upgrade agent was made for %q with other dependencies (%v)", w.config, w.deps != d)
	}
	if w.handler == nil {
		t.Fatal("no panic handler installed")
	}
	exit, stderr := klog.OsExit, os.Stderr
	defer func() { klog.OsExit, os.Stderr = exit, stderr }()
	devnull, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	os.Stderr = devnull
	code := -1
	klog.OsExit = func(c int) { code = c }
	token := strings.Repeat("a", 64) + ".eyJh.eyJi.c2ln"
	// Upstream's certificate manager quotes a token it cannot read.
	w.handler("edgehub", "failed to apply the edge certs, err: token "+token+" credentials are in the wrong format", []byte("stack"))
	if code != 2 {
		t.Errorf("a module's panic ended the node with code %d, want 2 through klog's exit hook", code)
	}
	if printed, _ := os.ReadFile(devnull.Name()); strings.Contains(string(printed), token) || !strings.Contains(string(printed), "credentials are in the wrong format") {
		t.Errorf("the panic printed %q: the token must not show, the reason must", printed)
	}
}

// The node's own wiring leaves nothing out: a missing part would be a nil
// call when the node starts.
func TestHostWiringIsComplete(t *testing.T) {
	w := HostWiring()
	for name, missing := range map[string]bool{
		"PanicHandler": w.PanicHandler == nil, "UpgradeAgent": w.UpgradeAgent == nil, "Register": w.Register == nil,
		"WatchConfig": w.WatchConfig == nil, "RunBus": w.RunBus == nil,
	} {
		if missing {
			t.Errorf("HostWiring has no %s", name)
		}
	}
}
