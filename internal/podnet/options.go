package podnet

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// NewOptions are cni-config's defaults on d's host: a nat network, the
// CNI and containerd files where the installation guide puts them, the
// record beside containerd, and the host's facts.
func NewOptions(d *deps.Dependencies) *Options {
	l := d.Layout
	return &Options{
		GOOS:               d.Host.GOOS,
		Mode:               cni.ModeNAT,
		NodeConfig:         l.ConfigFile,
		Output:             l.CNIConfFile,
		CNIBinDir:          l.CNIBinDir,
		ContainerdConfig:   l.ContainerdConfigFile,
		ContainerdDefaults: containerd.Dirs{BinDir: l.CNIBinDir, ConfDir: l.CNIConfDir},
		StateFile:          StateFile(l),
		L2Bridge:           cni.L2BridgeOptions{Plugin: cni.PluginSDNBridge, NetworkName: cni.DefaultL2BridgeNetwork},
		Facts:              SystemFacts(),
	}
}

// AddFlags binds cni-config's flags to o; the defaults are o's values.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.AddNetworkFlags(fs)
	fs.StringVar(&o.NodeConfig, "config", o.NodeConfig, "l2bridge without --subnet: the joined node's configuration, which names its database and node name")
	fs.VarP(outputFlag{o}, "output", "o", "File to write, or - for standard output (default for l2bridge: "+cni.L2BridgeFileName+" in the same directory)")
	fs.StringVar(&o.CNIBinDir, "cni-bin-dir", o.CNIBinDir, "Directory of the CNI plugin executables, which containerd is pointed at")
	fs.StringVar(&o.ContainerdConfig, "containerd-config", o.ContainerdConfig, `containerd's config.toml to point at the CNI directories ("" leaves it alone)`)
	fs.BoolVar(&o.Force, "force", o.Force, "Replace an existing CNI config file that differs")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Print what would be done, with the diff of config.toml, and change nothing")
}

// AddNetworkFlags binds the flags that describe the pod network itself
// (mode, ranges, gateway, DNS, the l2bridge adapter and plugin), which
// join takes too; the defaults are o's values.
func (o *Options) AddNetworkFlags(fs *pflag.FlagSet) {
	l := &o.L2Bridge
	fs.StringVar(&o.Mode, "mode", o.Mode, "Pod network: nat (reachable from this host) or l2bridge (routable pod addresses)")
	fs.StringVar(&o.Subnet, "subnet", o.Subnet, "Pod subnet in CIDR form (required for nat); for l2bridge the node's pod range, by default its Node object's spec.podCIDR once the node has joined and run")
	fs.StringVar(&o.Gateway, "gateway", o.Gateway, "Gateway of the pod subnet (default: its first address); for l2bridge the host endpoint takes the next one")
	fs.StringSliceVar(&o.DNS, "dns", o.DNS, "DNS servers for pods, e.g. the cluster DNS service address (default: the host's resolvers)")
	fs.StringSliceVar(&o.DNSSearch, "dns-search", o.DNSSearch, "l2bridge: DNS search domains for pods, e.g. svc.cluster.local,cluster.local")
	fs.StringVar(&l.Adapter, "adapter", l.Adapter, "l2bridge: the host adapter to bridge pods to (default: the one with the default route)")
	fs.StringVar(&l.ClusterCIDR, "cluster-cidr", l.ClusterCIDR, "l2bridge: the cluster's pod range, kept out of outbound NAT (required)")
	fs.StringVar(&l.ServiceCIDR, "service-cidr", l.ServiceCIDR, "l2bridge: the cluster's service range, kept out of outbound NAT and routed through the host (required)")
	fs.StringVar(&l.Plugin, "plugin", l.Plugin, "l2bridge: the CNI plugin, sdnbridge (windows-container-networking) or win-bridge (containernetworking/plugins)")
	fs.StringVar(&l.NetworkName, "network-name", l.NetworkName, "l2bridge: name of the HNS network and of the CNI network")
}

// outputFlag is -o: a string flag that also records that it was given,
// since l2bridge writes to another file than nat unless told which.
type outputFlag struct{ o *Options }

func (f outputFlag) String() string { return f.o.Output }
func (f outputFlag) Set(v string) error {
	f.o.Output, f.o.OutputGiven = v, true
	return nil
}
func (f outputFlag) Type() string { return "string" }

// HostFacts are what Complete asks the host; SystemFacts are the real
// ones.
type HostFacts struct {
	// Resolvers are the host's DNS servers.
	Resolvers func() ([]string, error)
	// Networks are the host's addresses with their prefixes.
	Networks func() ([]cni.HostNetwork, error)
	// Adapters are the names of the host's network adapters.
	Adapters func() ([]string, error)
	// RouteIP is the address of the default route.
	RouteIP func() (net.IP, error)
	// PodCIDR is the pod range the cluster gave the node that runs
	// configFile on host.
	PodCIDR func(configFile string, host config.Host) (string, error)
}

// SystemFacts ask this host, and the node's database for its pod range.
func SystemFacts() HostFacts {
	return HostFacts{
		Resolvers: cni.HostResolvers,
		Networks:  cni.HostNetworks,
		Adapters:  cni.HostAdapters,
		RouteIP:   func() (net.IP, error) { return config.DefaultRouteIP("") },
		PodCIDR:   JoinedPodCIDR,
	}
}

// HostEnv is the host cni-config changes: HNS, d's file system, and the
// containerd installed in d's layout.
func HostEnv(d *deps.Dependencies) Env {
	l := d.Layout
	acls := d.ACLs
	return Env{
		HNS:               hns.New(),
		FS:                d.FS,
		ContainerdVersion: InstalledContainerd(l.GOOS, l.ContainerdDir),
		Now:               time.Now,
		Protect:           &acls,
	}
}

// Complete fills in what the flags leave to d's host, asking o.Facts: for
// l2bridge the output file beside nat's and, without --subnet, the node's
// pod range (which the command says, PodRangeNote); the host's resolvers
// when --dns is not given, the host's networks that the subnet must not
// overlap, and the adapters, the one with the default route the l2bridge
// default.
func (o *Options) Complete(d *deps.Dependencies) error {
	host, facts := d.Host, o.Facts
	o.GOOS = host.GOOS
	l := d.Layout
	if !o.OutputGiven && o.Mode == cni.ModeL2Bridge {
		o.Output = ospath.Join(o.GOOS, l.CNIConfDir, cni.L2BridgeFileName)
	}
	if o.Subnet == "" && o.Mode == cni.ModeL2Bridge {
		cidr, err := facts.PodCIDR(o.NodeConfig, host)
		if err != nil {
			return err
		}
		o.Subnet, o.SubnetFromNode = cidr, true
	}
	var hostDNS []string
	if len(o.DNS) == 0 {
		resolvers, err := facts.Resolvers()
		if err != nil {
			return fmt.Errorf("--dns was not given and the host's DNS servers cannot be read (%v): pass --dns", err)
		}
		hostDNS = resolvers
	}
	networks, err := facts.Networks()
	if err != nil {
		return fmt.Errorf("read the host's networks to check --subnet against them: %w", err)
	}
	o.NAT = cni.Options{Subnet: o.Subnet, Gateway: o.Gateway, DNS: o.DNS, HostDNS: hostDNS, HostNetworks: networks}
	b := &o.L2Bridge
	b.Subnet, b.Gateway, b.DNS, b.HostDNS, b.DNSSearch, b.HostNetworks = o.Subnet, o.Gateway, o.DNS, hostDNS, o.DNSSearch, networks
	if b.Adapters, err = facts.Adapters(); err != nil {
		return err
	}
	if b.Adapter == "" {
		if ip, err := facts.RouteIP(); err == nil {
			if a, ok := netip.AddrFromSlice(ip); ok {
				b.Adapter = cni.DefaultAdapter(a, networks, b.Adapters)
			}
		}
	}
	return nil
}

// PodRangeNote is the line the command prints when Complete took the pod
// range from the node's Node object, "" otherwise.
func (o Options) PodRangeNote() string {
	if !o.SubnetFromNode {
		return ""
	}
	return fmt.Sprintf("Pod range of this node from its Node object: %s\n", o.Subnet)
}

// Validate checks the options as Complete left them: the mode, and the
// network's inputs as the generator of its CNI configuration judges them.
// What depends on the files (an existing -o without --force, config.toml,
// an earlier network) is checked by Configure.
func (o Options) Validate() error {
	_, _, _, err := o.network()
	return err
}

// network is the mode, in its canonical spelling, and the CNI
// configuration it writes; for l2bridge also the network's plan.
func (o Options) network() (string, []byte, *cni.L2BridgePlan, error) {
	switch strings.ToLower(strings.TrimSpace(o.Mode)) {
	case "", cni.ModeNAT:
		conf, err := cni.Generate(o.NAT)
		return cni.ModeNAT, conf, nil, err
	case cni.ModeL2Bridge:
		p, err := cni.PlanL2Bridge(o.L2Bridge)
		if err != nil {
			return cni.ModeL2Bridge, nil, nil, err
		}
		return cni.ModeL2Bridge, p.Conf, &p, nil
	}
	return "", nil, nil, &cni.FlagError{Flag: cni.FlagMode, Value: o.Mode, Problem: "is not a pod network mode",
		Fix: "use " + cni.FlagMode + " nat (pods reachable from this host) or " + cni.FlagMode + " l2bridge (routable pod addresses)"}
}

// JoinedPodCIDR is the pod range the cluster gave the node that runs
// configFile on host, from the Node object the node keeps in its database
// once it has joined and run.
func JoinedPodCIDR(configFile string, host config.Host) (string, error) {
	c, _, err := config.Load(configFile, host)
	if err != nil {
		return "", fmt.Errorf("--subnet was not given, and the node's pod range cannot be read without its configuration (%v): pass --subnet with the node's pod range (kubectl get node <name> -o jsonpath={.spec.podCIDR})", err)
	}
	name := ""
	if c.Modules != nil && c.Modules.Edged != nil {
		name = c.Modules.Edged.HostnameOverride
	}
	if c.DataBase == nil || name == "" {
		return "", fmt.Errorf("--subnet was not given, and %s names no database or node: pass --subnet with the node's pod range", configFile)
	}
	cidr, err := nodedb.PodCIDR(c.DataBase.DataSource, name)
	if err != nil {
		return "", fmt.Errorf("--subnet was not given and the node's pod range is unknown: %w; start the joined node once so that it receives its Node object, or pass --subnet (kubectl get node %s -o jsonpath={.spec.podCIDR})", err, name)
	}
	return cidr, nil
}
