package preflight

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

const (
	nameContainerdCNI = "containerd CNI dirs"
	nameHNSNetwork    = "HNS network"
	nameHostEndpoint  = "Host endpoint"
	nameIPAMPlugin    = "CNI IPAM plugin"
)

// PodNetworkProbes gather the facts of the pod network cni-config sets up.
// Probes without them (nil) give no pod network rows.
type PodNetworkProbes struct {
	// ContainerdConfig reads containerd's config.toml and says where it
	// is; an error wrapping fs.ErrNotExist means there is none.
	ContainerdConfig func() (path string, data []byte, err error)
	// State reads cni-config's record; ok is false when it never ran.
	State func() (st podnet.State, ok bool, err error)
	// HNS looks up the l2bridge network and its host endpoint.
	HNS HNSReader
}

// HNSReader is the part of HNS preflight reads (hns.Client).
type HNSReader interface {
	NetworkByName(name string) (*hns.Network, error)
	EndpointByName(name string) (*hns.Endpoint, error)
	Forwarding(addr netip.Addr) (hns.Interface, error)
}

const rerunL2Bridge = "run edgecore.exe cni-config --mode l2bridge again with the same flags: it creates what is missing and reuses the rest"

// checkPodNetwork checks that containerd reads the CNI directories
// cni-config wrote to and, for an l2bridge network, that its HNS network
// and host endpoint are there with forwarding on.
func checkPodNetwork(cfg Config, p Probes) []Row {
	pn := p.PodNetwork
	if pn == nil {
		return nil
	}
	var st podnet.State
	var recorded bool
	if pn.State != nil {
		var err error
		if st, recorded, err = pn.State(); err != nil {
			return []Row{fail(nameContainerdCNI, oneLine(err.Error()), "delete that file and run edgecore.exe cni-config again")}
		}
	}
	rows := []Row{checkContainerdDirs(cfg, pn, st, recorded)}
	return append(rows, checkL2Bridge(cfg, p, st, recorded)...)
}

// checkContainerdDirs compares where config.toml makes containerd look
// with where the CNI config and plugins are: cni-config's record, or the
// directories the CNI rows checked.
func checkContainerdDirs(cfg Config, pn *PodNetworkProbes, st podnet.State, recorded bool) Row {
	if pn.ContainerdConfig == nil {
		return notProbed(nameContainerdCNI)
	}
	wantConf, wantBin := cfg.CNIConfDir, cfg.CNIBinDir
	if recorded && st.CNIConfFile != "" {
		wantConf = ospath.Dir(pathOS(st.CNIConfFile), st.CNIConfFile)
	}
	if recorded && st.CNIBinDir != "" {
		wantBin = st.CNIBinDir
	}
	goos := pathOS(wantConf)
	path, data, err := pn.ContainerdConfig()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// containerd's defaults are the layout's directories, which the
		// CNI rows checked.
		if ospath.Same(goos, wantConf, cfg.CNIConfDir) && ospath.Same(goos, wantBin, cfg.CNIBinDir) {
			return pass(nameContainerdCNI, "no "+path+": containerd uses its defaults, "+cfg.CNIConfDir+" and "+cfg.CNIBinDir)
		}
		return fail(nameContainerdCNI, "no "+path+": containerd reads its defaults, "+cfg.CNIConfDir+" and "+cfg.CNIBinDir+", not "+wantConf+" and "+wantBin+" where cni-config wrote",
			"write containerd's configuration (containerd.exe config default | Out-File '"+path+"' -Encoding ascii), run edgecore.exe cni-config again, then Restart-Service containerd")
	case err != nil:
		return couldNotCheck(nameContainerdCNI, err)
	}
	s, err := containerd.Read(data)
	var ce *containerd.Error
	if errors.As(err, &ce) {
		ce.File = path
		return fail(nameContainerdCNI, ce.File+lineSuffix(ce.Line)+": "+strings.TrimPrefix(ce.Key+" ", " ")+ce.Problem, ce.Fix)
	}
	if err != nil {
		return couldNotCheck(nameContainerdCNI, err)
	}
	table := containerd.TablePath(s.Table)
	fix := "run edgecore.exe cni-config again (it points " + path + " there, keeping a .bak copy), then Restart-Service containerd"
	conf := s.ConfDir
	if conf == "" {
		conf = cfg.CNIConfDir
	}
	if !ospath.Same(goos, conf, wantConf) {
		return fail(nameContainerdCNI, fmt.Sprintf("containerd reads CNI configs from %s (%s.%s in %s), not from %s where the CNI config is", conf, table, containerd.KeyConfDir, path, wantConf), fix)
	}
	bins := s.BinDirs
	if len(bins) == 0 {
		bins = []string{cfg.CNIBinDir}
	}
	for _, b := range bins {
		if ospath.Same(goos, b, wantBin) {
			return pass(nameContainerdCNI, fmt.Sprintf("%s points containerd at %s and %s", path, conf, strings.Join(bins, ", ")))
		}
	}
	key := s.BinKey
	if key == "" {
		key = containerd.KeyBinDir
	}
	return fail(nameContainerdCNI, fmt.Sprintf("containerd looks for CNI plugins in %s (%s.%s in %s), not in %s", strings.Join(bins, ", "), table, key, path, wantBin), fix)
}

func lineSuffix(line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(":%d", line)
}

// pathOS tells a Windows path from a POSIX one, so that paths compare the
// way their OS does wherever the tests run.
func pathOS(p string) string {
	if strings.Contains(p, `\`) || len(p) >= 2 && p[1] == ':' {
		return "windows"
	}
	return "linux"
}

// loadedConf is what the l2bridge rows need from the CNI config containerd
// loads.
type loadedConf struct {
	Name string `json:"name"`
	Type string `json:"type"`
	IPAM struct {
		Type string `json:"type"`
	} `json:"ipam"`
}

func isL2BridgePlugin(t string) bool {
	switch strings.ToLower(t) {
	case cni.PluginSDNBridge, cni.PluginWinBridge, "l2bridge": // l2bridge: sdnbridge's old name
		return true
	}
	return false
}

func checkL2Bridge(cfg Config, p Probes, st podnet.State, recorded bool) []Row {
	var conf loadedConf
	if p.ReadDir != nil && p.ReadFile != nil {
		if names, err := p.ReadDir(cfg.CNIConfDir); err == nil {
			if loaded, _ := cni.PickConfFile(names); loaded != "" {
				if data, err := p.ReadFile(joinPath(cfg.CNIConfDir, loaded)); err == nil {
					_ = json.Unmarshal(data, &conf) // the CNI rows report a broken file
				}
			}
		}
	}
	network := ""
	switch {
	case isL2BridgePlugin(conf.Type):
		network = conf.Name
	case recorded && st.Mode == cni.ModeL2Bridge && st.Network != nil:
		network = st.Network.Name
	default:
		return nil // nat: the plugin makes its own network
	}
	pn := p.PodNetwork
	if pn.HNS == nil {
		return []Row{notProbed(nameHNSNetwork), notProbed(nameHostEndpoint)}
	}
	var rows []Row
	if strings.EqualFold(conf.Type, cni.PluginWinBridge) && conf.IPAM.Type != "" && p.ReadDir != nil {
		rows = append(rows, checkIPAMPlugin(cfg, p, conf.IPAM.Type))
	}
	n, err := pn.HNS.NetworkByName(network)
	switch {
	case err != nil:
		return append(rows, couldNotCheck(nameHNSNetwork, err), skip(nameHostEndpoint, "the HNS network could not be checked"))
	case n == nil:
		return append(rows, fail(nameHNSNetwork, fmt.Sprintf("no HNS network %q, which the l2bridge CNI config needs", network), rerunL2Bridge),
			skip(nameHostEndpoint, "no HNS network"))
	case !n.IsType(hns.TypeL2Bridge):
		return append(rows, fail(nameHNSNetwork, fmt.Sprintf("HNS network %q is of type %s, not %s", network, n.Type, hns.TypeL2Bridge),
			fmt.Sprintf("remove it if nothing uses it (Get-HnsNetwork | Where-Object Name -eq '%s' | Remove-HnsNetwork) and %s", network, rerunL2Bridge)),
			skip(nameHostEndpoint, "the HNS network is not an l2bridge network"))
	}
	var subnets []string
	for _, s := range n.Subnets {
		subnets = append(subnets, s.Prefix.String())
	}
	detail := fmt.Sprintf("%q: %s, %s", n.Name, n.Type, strings.Join(subnets, ", "))
	if n.Adapter != "" {
		detail += " on " + n.Adapter
	}
	rows = append(rows, pass(nameHNSNetwork, detail))
	return append(rows, checkHostEndpoint(pn.HNS, n, st, recorded))
}

func checkIPAMPlugin(cfg Config, p Probes, ipamType string) Row {
	exe := ipamType + ".exe"
	names, err := p.ReadDir(cfg.CNIBinDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return couldNotCheck(nameIPAMPlugin, err)
	}
	for _, n := range names {
		if strings.EqualFold(n, exe) {
			return pass(nameIPAMPlugin, exe+" in "+cfg.CNIBinDir)
		}
	}
	return fail(nameIPAMPlugin, exe+" not found in "+cfg.CNIBinDir+"; win-bridge calls it for every pod's address",
		"copy "+exe+" from the Windows release of containernetworking/plugins into "+cfg.CNIBinDir)
}

// checkHostEndpoint checks the pods' gateway: the host endpoint on the
// network, attached to the host, forwarding, and the host's own adapter
// forwarding too.
func checkHostEndpoint(h HNSReader, n *hns.Network, st podnet.State, recorded bool) Row {
	name := cni.HostEndpointName(n.Name)
	if recorded && st.Endpoint != nil && st.Network != nil && st.Network.Name == n.Name {
		name = st.Endpoint.Name
	}
	e, err := h.EndpointByName(name)
	switch {
	case err != nil:
		return couldNotCheck(nameHostEndpoint, err)
	case e == nil:
		return fail(nameHostEndpoint, fmt.Sprintf("no host endpoint %q on %q: pods have no gateway", name, n.Name), rerunL2Bridge)
	case e.NetworkID != n.ID:
		return fail(nameHostEndpoint, fmt.Sprintf("host endpoint %q belongs to another network than %q", name, n.Name), rerunL2Bridge)
	}
	addrs := []netip.Addr{e.IP}
	if recorded {
		if ip, err := netip.ParseAddr(st.NodeIP); err == nil {
			addrs = append(addrs, ip)
		}
	}
	var on []string
	for _, a := range addrs {
		i, err := h.Forwarding(a)
		if err != nil {
			if a == e.IP {
				return fail(nameHostEndpoint, fmt.Sprintf("host endpoint %q (%s) is not attached to the host: %s", name, a, oneLine(err.Error())), rerunL2Bridge)
			}
			return couldNotCheck(nameHostEndpoint, err)
		}
		if !i.Forwarding {
			return fail(nameHostEndpoint, fmt.Sprintf("forwarding is off on %q (%s), so pods' traffic to other hosts stops at this host", i.Name, a),
				fmt.Sprintf("Set-NetIPInterface -InterfaceAlias '%s' -AddressFamily IPv4 -Forwarding Enabled, or %s", i.Name, rerunL2Bridge))
		}
		on = append(on, fmt.Sprintf("%q (%s)", i.Name, a))
	}
	return pass(nameHostEndpoint, fmt.Sprintf("%q, %s; forwarding on for %s", name, e.IP, strings.Join(on, ", ")))
}
