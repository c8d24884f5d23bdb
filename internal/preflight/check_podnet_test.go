package preflight

import (
	"context"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

const (
	confDir   = `C:\Program Files\containerd\cni\conf`
	binDir    = `C:\Program Files\containerd\cni\bin`
	ctrdToml  = `C:\Program Files\containerd\config.toml`
	l2Conf    = confDir + `\0-containerd-l2bridge.conf`
	l2bridgeJ = `{"cniVersion": "0.2.0", "name": "edgecore-l2bridge", "type": "sdnbridge",
	  "ipam": {"subnet": "10.244.2.0/24", "routes": [{"gw": "10.244.2.2"}]},
	  "dns": {"nameservers": ["10.96.0.10"]}, "AdditionalArgs": [{"Name": "EndpointPolicy", "Value": {"Type": "OutBoundNAT"}}]}`
)

type fakeHNSReader struct {
	networks   map[string]*hns.Network
	endpoints  map[string]*hns.Endpoint
	forwarding map[netip.Addr]*hns.Interface
	err        error
}

func (f *fakeHNSReader) NetworkByName(n string) (*hns.Network, error)   { return f.networks[n], f.err }
func (f *fakeHNSReader) EndpointByName(n string) (*hns.Endpoint, error) { return f.endpoints[n], f.err }
func (f *fakeHNSReader) Forwarding(a netip.Addr) (hns.Interface, error) {
	if i := f.forwarding[a]; i != nil {
		return *i, nil
	}
	return hns.Interface{}, fmt.Errorf("no interface of this host has the address %s", a)
}

// podnetHost is a healthy host with an l2bridge network as cni-config sets
// it up, containerd 1.7's default config.toml and cni-config's record.
type podnetHost struct {
	*host
	toml  []byte
	state *podnet.State
	hns   *fakeHNSReader
}

func healthyL2Bridge(t *testing.T) *podnetHost {
	t.Helper()
	toml, err := os.ReadFile("../../config/containerd/testdata/containerd-1.7.25-windows-default.toml")
	if err != nil {
		t.Fatal(err)
	}
	h := &podnetHost{host: healthyHost(), toml: toml}
	delete(h.files, confDir+`\0-containerd-nat.conf`)
	h.files[l2Conf] = l2bridgeJ
	h.files[binDir+`\sdnbridge.exe`] = "MZ"
	h.state = &podnet.State{Mode: "l2bridge", CNIConfFile: l2Conf, CNIBinDir: binDir, NodeIP: "192.168.1.20",
		Network:  &podnet.Object{Name: "edgecore-l2bridge", ID: "n1", Created: true},
		Endpoint: &podnet.Object{Name: "edgecore-l2bridge-host", ID: "e1", Created: true}}
	h.hns = &fakeHNSReader{
		networks: map[string]*hns.Network{"edgecore-l2bridge": {ID: "n1", Name: "edgecore-l2bridge", Type: "L2Bridge", Adapter: "Ethernet",
			Subnets: []hns.Subnet{{Prefix: netip.MustParsePrefix("10.244.2.0/24")}}}},
		endpoints: map[string]*hns.Endpoint{"edgecore-l2bridge-host": {ID: "e1", Name: "edgecore-l2bridge-host", NetworkID: "n1", IP: netip.MustParseAddr("10.244.2.2")}},
		forwarding: map[netip.Addr]*hns.Interface{
			netip.MustParseAddr("10.244.2.2"):   {Name: "vEthernet (edgecore-l2bridge-host)", Forwarding: true},
			netip.MustParseAddr("192.168.1.20"): {Name: "vEthernet (Ethernet)", Forwarding: true},
		},
	}
	return h
}

func (h *podnetHost) probes() Probes {
	p := h.host.probes()
	p.PodNetwork = &PodNetworkProbes{
		ContainerdConfig: func() (string, []byte, error) {
			if h.toml == nil {
				return ctrdToml, nil, &fs.PathError{Op: "open", Path: ctrdToml, Err: fs.ErrNotExist}
			}
			return ctrdToml, h.toml, nil
		},
		State: func() (podnet.State, bool, error) {
			if h.state == nil {
				return podnet.State{}, false, nil
			}
			return *h.state, true, nil
		},
		HNS: h.hns,
	}
	return p
}

func rowsNamed(rows []Row, names ...string) []Row {
	var out []Row
	for _, r := range rows {
		for _, n := range names {
			if r.Name == n {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestPodNetworkChecks(t *testing.T) {
	fixRerun := rerunL2Bridge
	for _, tc := range []struct {
		name   string
		change func(h *podnetHost)
		want   []Row
	}{
		{"healthy l2bridge", func(h *podnetHost) {}, []Row{
			pass(nameContainerdCNI, ctrdToml+` points containerd at `+confDir+` and `+binDir),
			pass(nameHNSNetwork, `"edgecore-l2bridge": L2Bridge, 10.244.2.0/24 on Ethernet`),
			pass(nameHostEndpoint, `"edgecore-l2bridge-host", 10.244.2.2; forwarding on for "vEthernet (edgecore-l2bridge-host)" (10.244.2.2), "vEthernet (Ethernet)" (192.168.1.20)`),
		}},
		{"HNS network missing", func(h *podnetHost) { delete(h.hns.networks, "edgecore-l2bridge") }, []Row{
			pass(nameContainerdCNI, ctrdToml+` points containerd at `+confDir+` and `+binDir),
			fail(nameHNSNetwork, `no HNS network "edgecore-l2bridge", which the l2bridge CNI config needs`, fixRerun),
			skip(nameHostEndpoint, "no HNS network"),
		}},
		{"HNS network of the wrong type", func(h *podnetHost) { h.hns.networks["edgecore-l2bridge"].Type = "NAT" }, []Row{
			fail(nameHNSNetwork, `HNS network "edgecore-l2bridge" is of type NAT, not L2Bridge`,
				"remove it if nothing uses it (Get-HnsNetwork | Where-Object Name -eq 'edgecore-l2bridge' | Remove-HnsNetwork) and "+fixRerun),
			skip(nameHostEndpoint, "the HNS network is not an l2bridge network"),
		}},
		{"forwarding off on the host endpoint", func(h *podnetHost) {
			h.hns.forwarding[netip.MustParseAddr("10.244.2.2")].Forwarding = false
		}, []Row{
			fail(nameHostEndpoint, `forwarding is off on "vEthernet (edgecore-l2bridge-host)" (10.244.2.2), so pods' traffic to other hosts stops at this host`,
				"Set-NetIPInterface -InterfaceAlias 'vEthernet (edgecore-l2bridge-host)' -AddressFamily IPv4 -Forwarding Enabled, or "+fixRerun),
		}},
		{"forwarding off on the host's adapter", func(h *podnetHost) {
			h.hns.forwarding[netip.MustParseAddr("192.168.1.20")].Forwarding = false
		}, []Row{
			fail(nameHostEndpoint, `forwarding is off on "vEthernet (Ethernet)" (192.168.1.20), so pods' traffic to other hosts stops at this host`,
				"Set-NetIPInterface -InterfaceAlias 'vEthernet (Ethernet)' -AddressFamily IPv4 -Forwarding Enabled, or "+fixRerun),
		}},
		{"host endpoint missing", func(h *podnetHost) { delete(h.hns.endpoints, "edgecore-l2bridge-host") }, []Row{
			fail(nameHostEndpoint, `no host endpoint "edgecore-l2bridge-host" on "edgecore-l2bridge": pods have no gateway`, fixRerun),
		}},
		{"host endpoint not attached", func(h *podnetHost) { delete(h.hns.forwarding, netip.MustParseAddr("10.244.2.2")) }, []Row{
			fail(nameHostEndpoint, `host endpoint "edgecore-l2bridge-host" (10.244.2.2) is not attached to the host: no interface of this host has the address 10.244.2.2`, fixRerun),
		}},
		{"HNS not there (Wine, Linux)", func(h *podnetHost) { h.hns.err = hns.ErrNotWindows }, []Row{
			warn(nameHNSNetwork, "could not check: the Host Networking Service (HNS) exists on Windows only", ""),
			skip(nameHostEndpoint, "the HNS network could not be checked"),
		}},
		{"containerd reads another conf dir", func(h *podnetHost) {
			h.toml = []byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = \"C:\\\\k\\\\cni\\\\config\"\n")
		}, []Row{
			fail(nameContainerdCNI, `containerd reads CNI configs from C:\k\cni\config (plugins."io.containerd.grpc.v1.cri".cni.conf_dir in `+ctrdToml+`), not from `+confDir+` where the CNI config is`,
				"run edgecore.exe cni-config again (it points "+ctrdToml+" there, keeping a .bak copy), then Restart-Service containerd"),
		}},
		{"containerd 2.1 looks for plugins elsewhere", func(h *podnetHost) {
			h.toml = []byte("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dir = ''\n  bin_dirs = ['C:\\opt\\cni\\bin']\n")
		}, []Row{
			fail(nameContainerdCNI, `containerd looks for CNI plugins in C:\opt\cni\bin (plugins."io.containerd.cri.v1.runtime".cni.bin_dirs in `+ctrdToml+`), not in `+binDir,
				"run edgecore.exe cni-config again (it points "+ctrdToml+" there, keeping a .bak copy), then Restart-Service containerd"),
		}},
		{"config.toml PowerShell wrote as UTF-16", func(h *podnetHost) { h.toml = []byte("\xff\xfev\x00") }, []Row{
			fail(nameContainerdCNI, ctrdToml+": the file is UTF-16 (Windows PowerShell 5.1's > writes that), which containerd cannot read",
				`save it as ASCII (Get-Content config.toml | Set-Content -Encoding ascii config.toml), or regenerate it: & "$Env:ProgramFiles\containerd\bin\containerd.exe" config default | Out-File config.toml -Encoding ascii`),
		}},
		{"no config.toml: containerd's defaults are the CNI dirs", func(h *podnetHost) { h.toml = nil }, []Row{
			pass(nameContainerdCNI, "no "+ctrdToml+": containerd uses its defaults, "+confDir+" and "+binDir),
		}},
		{"nat and no record: no HNS rows", func(h *podnetHost) {
			h.state = nil
			delete(h.files, l2Conf)
			h.files[confDir+`\0-containerd-nat.conf`] = goodCNI
		}, []Row{
			pass(nameContainerdCNI, ctrdToml+` points containerd at `+confDir+` and `+binDir),
		}},
		{"win-bridge without host-local.exe", func(h *podnetHost) {
			h.files[l2Conf] = strings.Replace(strings.Replace(l2bridgeJ, `"sdnbridge"`, `"win-bridge"`, 1), `"ipam": {`, `"ipam": {"type": "host-local", `, 1)
		}, []Row{
			fail(nameIPAMPlugin, `host-local.exe not found in `+binDir+`; win-bridge calls it for every pod's address`,
				"copy host-local.exe from the Windows release of containernetworking/plugins into "+binDir),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := healthyL2Bridge(t)
			tc.change(h)
			all := Run(context.Background(), healthyConfig(), h.probes())
			var names []string
			for _, w := range tc.want {
				names = append(names, w.Name)
			}
			got := rowsNamed(all, names...)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("rows\n got: %v\nwant: %v", got, tc.want)
			}
			if tc.name == "nat and no record: no HNS rows" && len(rowsNamed(all, nameHNSNetwork, nameHostEndpoint)) != 0 {
				t.Errorf("HNS rows for a nat network: %v", all)
			}
			for _, r := range all {
				if r.Status == Fail && r.Fix == "" {
					t.Errorf("FAIL row without a fix: %v", r)
				}
			}
		})
	}
}
