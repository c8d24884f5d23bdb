package podnet

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// changes counts the changes a run makes, in HNS and on disk, and fails the
// one numbered failAt (1-based), once: the tests fail each step in turn to
// prove that the steps before it are undone.
type changes struct {
	n, failAt int
	log       []string
}

func (s *changes) change(what string) error {
	s.n++
	s.log = append(s.log, what)
	if s.n == s.failAt {
		return fmt.Errorf("injected failure at step %d (%s)", s.n, what)
	}
	return nil
}

// fakeHNS is a recording HNS: networks and endpoints by name, forwarding by
// address.
type fakeHNS struct {
	steps      *changes
	networks   map[string]*hns.Network
	endpoints  map[string]*hns.Endpoint
	attached   map[string]bool
	forwarding map[netip.Addr]bool
	nextID     int
	calls      []string
	// lbs and remote are what a proxier programmed: load balancers, and
	// which endpoints stand for pods of other hosts.
	lbs    []hns.LoadBalancer
	remote map[string]bool
}

func newFakeHNS(s *changes) *fakeHNS {
	return &fakeHNS{steps: s, networks: map[string]*hns.Network{}, endpoints: map[string]*hns.Endpoint{},
		attached: map[string]bool{}, forwarding: map[netip.Addr]bool{}, remote: map[string]bool{}}
}

func (f *fakeHNS) id() string {
	f.nextID++
	return fmt.Sprintf("id-%d", f.nextID)
}

func (f *fakeHNS) NetworkByName(name string) (*hns.Network, error) {
	f.calls = append(f.calls, "NetworkByName "+name)
	n := f.networks[name]
	if n == nil {
		return nil, nil
	}
	c := *n
	return &c, nil
}

func (f *fakeHNS) CreateNetwork(spec hns.NetworkSpec) (*hns.Network, error) {
	f.calls = append(f.calls, "CreateNetwork "+spec.Name)
	if err := f.steps.change("create network " + spec.Name); err != nil {
		return nil, err
	}
	n := &hns.Network{ID: f.id(), Name: spec.Name, Type: spec.Type, Adapter: spec.Adapter,
		Subnets: []hns.Subnet{{Prefix: spec.Subnet, Gateway: spec.Gateway}}}
	f.networks[spec.Name] = n
	c := *n
	return &c, nil
}

func (f *fakeHNS) DeleteNetwork(id string) error {
	f.calls = append(f.calls, "DeleteNetwork "+id)
	for name, n := range f.networks {
		if n.ID == id {
			for en, e := range f.endpoints {
				if e.NetworkID == id {
					return fmt.Errorf("network %s still has endpoint %s", name, en)
				}
			}
			delete(f.networks, name)
		}
	}
	return nil
}

func (f *fakeHNS) EndpointByName(name string) (*hns.Endpoint, error) {
	f.calls = append(f.calls, "EndpointByName "+name)
	e := f.endpoints[name]
	if e == nil {
		return nil, nil
	}
	c := *e
	return &c, nil
}

func (f *fakeHNS) CreateEndpoint(networkID string, spec hns.EndpointSpec) (*hns.Endpoint, error) {
	f.calls = append(f.calls, "CreateEndpoint "+spec.Name)
	if err := f.steps.change("create endpoint " + spec.Name); err != nil {
		return nil, err
	}
	e := &hns.Endpoint{ID: f.id(), Name: spec.Name, NetworkID: networkID, IP: spec.IP}
	f.endpoints[spec.Name] = e
	c := *e
	return &c, nil
}

func (f *fakeHNS) AttachHost(id string) error {
	f.calls = append(f.calls, "AttachHost "+id)
	if err := f.steps.change("attach " + id); err != nil {
		return err
	}
	f.attached[id] = true
	return nil
}

func (f *fakeHNS) DeleteEndpoint(id string) error {
	f.calls = append(f.calls, "DeleteEndpoint "+id)
	for name, e := range f.endpoints {
		if e.ID == id {
			delete(f.endpoints, name)
			delete(f.attached, id)
		}
	}
	return nil
}

func (f *fakeHNS) Forwarding(a netip.Addr) (hns.Interface, error) {
	return hns.Interface{Name: "vEthernet (" + a.String() + ")", Forwarding: f.forwarding[a]}, nil
}

func (f *fakeHNS) EnableForwarding(a netip.Addr) error {
	f.calls = append(f.calls, "EnableForwarding "+a.String())
	if f.forwarding[a] {
		return nil
	}
	if err := f.steps.change("forwarding " + a.String()); err != nil {
		return err
	}
	f.forwarding[a] = true
	return nil
}

func (f *fakeHNS) LoadBalancers() ([]hns.LoadBalancer, error) {
	f.calls = append(f.calls, "LoadBalancers")
	return append([]hns.LoadBalancer(nil), f.lbs...), nil
}

func (f *fakeHNS) DeleteLoadBalancer(id string) error {
	f.calls = append(f.calls, "DeleteLoadBalancer "+id)
	for i, lb := range f.lbs {
		if lb.ID == id {
			f.lbs = append(f.lbs[:i], f.lbs[i+1:]...)
			return nil
		}
	}
	return nil
}

func (f *fakeHNS) NetworkEndpoints(networkID string) ([]hns.NetworkEndpoint, error) {
	var out []hns.NetworkEndpoint
	for _, e := range f.endpoints {
		if e.NetworkID == networkID {
			out = append(out, hns.NetworkEndpoint{Endpoint: *e, Remote: f.remote[e.ID]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (f *fakeHNS) mutations() []string {
	var out []string
	for _, c := range f.calls {
		if !strings.Contains(c, "ByName") {
			out = append(out, c)
		}
	}
	return out
}

// stepFS is the real file system, with writes counted as steps.
type stepFS struct {
	hostfs.OS
	steps *changes
}

func (f stepFS) WriteFile(path string, data []byte) error {
	if err := f.steps.change("write " + filepath.Base(path)); err != nil {
		return err
	}
	return f.OS.WriteFile(path, data)
}

// host is a test host: a temporary directory standing in for the
// containerd and kubeedge directories, containerd 1.7's default
// config.toml, and the Upstream-ToR notes' adapters.
type host struct {
	dir   string
	steps *changes
	hns   *fakeHNS
	toml  []byte
}

func newHost(t *testing.T) *host {
	t.Helper()
	h := &host{dir: t.TempDir(), steps: &changes{}}
	h.hns = newFakeHNS(h.steps)
	var err error
	h.toml, err = os.ReadFile("../../config/containerd/testdata/containerd-1.7.25-windows-default.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.path("config.toml"), h.toml, 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *host) path(name string) string { return filepath.Join(h.dir, name) }

func (h *host) env() Env {
	return Env{
		HNS:               h.hns,
		FS:                stepFS{steps: h.steps},
		ContainerdVersion: func() (containerd.Runtime, error) { return containerd.Runtime{Major: 1, Minor: 7, Patch: 25}, nil },
		Now:               func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) },
	}
}

// options are an l2bridge run writing into the host's directory; the
// directories differ from containerd's defaults, so config.toml is edited.
func (h *host) options() Options {
	return Options{
		GOOS: "linux",
		Mode: cni.ModeL2Bridge,
		L2Bridge: cni.L2BridgeOptions{
			Subnet: "10.160.11.0/24", ClusterCIDR: "10.160.0.0/12", ServiceCIDR: "10.176.0.0/12",
			DNS: []string{"10.176.0.10"}, Adapter: "eth1", Adapters: []string{"eth0", "eth1"},
			HostNetworks: []cni.HostNetwork{{Interface: "eth1", Address: netip.MustParsePrefix("100.100.126.216/23")}},
		},
		Output:             h.path(filepath.Join("cni", "conf", cni.L2BridgeFileName)),
		CNIBinDir:          h.path(filepath.Join("cni", "bin")),
		ContainerdConfig:   h.path("config.toml"),
		ContainerdDefaults: containerd.Dirs{BinDir: `C:\Program Files\containerd\cni\bin`, ConfDir: `C:\Program Files\containerd\cni\conf`},
		StateFile:          h.path("cni-config.json"),
	}
}

// files lists every file under the host's directory with its content.
func (h *host) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(h.dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(h.dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(m map[string]string) string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

func isFlagError(err error, flag string) bool {
	var fe *cni.FlagError
	return errors.As(err, &fe) && fe.Flag == flag
}
