package main

import (
	"fmt"
	"net/netip"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// newCNIConfigCommand writes the pod network containerd on Windows hands
// to its CNI plugin: nat, or l2bridge with its HNS network, and points
// containerd's config.toml at the CNI directories.
func newCNIConfigCommand() *cobra.Command {
	layout := hostLayout()
	o := podnet.Options{
		CNIBinDir:          layout.CNIBinDir,
		ContainerdConfig:   layout.ContainerdConfigFile,
		ContainerdDefaults: containerd.Dirs{BinDir: layout.CNIBinDir, ConfDir: layout.CNIConfDir},
		StateFile:          podnet.StateFile(layout),
	}
	var (
		dns, search []string
		subnet, gw  string
		configFile  = layout.ConfigFile
	)
	cmd := &cobra.Command{
		Use:   "cni-config",
		Short: "Write the pod network for containerd on Windows (nat or l2bridge)",
		Long: "Write the pod network containerd reads on Windows and point containerd's config.toml at it.\n\n" +
			"--mode nat (the default): pods behind the host's address, with a gateway inside the subnet and\n" +
			"explicit DNS servers.\n" +
			"--mode l2bridge: routable pod addresses. Creates (or reuses) an L2Bridge HNS network on --adapter\n" +
			"and a host endpoint with forwarding on, writes an sdnbridge (or win-bridge) config that keeps the\n" +
			"cluster's pod and service ranges out of outbound NAT, and prints the route the other side needs.\n\n" +
			"containerd's config.toml (1.7 and 2.x layouts) gets its CNI bin and conf directories pointed at\n" +
			"--cni-bin-dir and the directory of -o; nothing else in it changes, and the original is kept as a\n" +
			".bak copy. Wrong input is refused before anything changes; a step that fails undoes the others.",
		Example: "  edgecore.exe cni-config --subnet 10.244.2.0/24 --force\n" +
			"  edgecore.exe cni-config --mode l2bridge --subnet 10.244.2.0/24 --cluster-cidr 10.244.0.0/16 \\\n" +
			"      --service-cidr 10.96.0.0/12 --dns 10.96.0.10 --adapter Ethernet --dry-run",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.GOOS = runtime.GOOS
			if !cmd.Flags().Changed("output") && o.Mode == cni.ModeL2Bridge {
				o.Output = ospath.Join(o.GOOS, layout.CNIConfDir, cni.L2BridgeFileName)
			}
			if subnet == "" && o.Mode == cni.ModeL2Bridge {
				cidr, err := joinedPodCIDR(configFile)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Pod range of this node from its Node object: %s\n", cidr)
				subnet = cidr
			}
			var hostDNS []string
			if len(dns) == 0 {
				resolvers, err := cni.HostResolvers()
				if err != nil {
					return fmt.Errorf("--dns was not given and the host's DNS servers cannot be read (%v): pass --dns", err)
				}
				hostDNS = resolvers
			}
			networks, err := cni.HostNetworks()
			if err != nil {
				return fmt.Errorf("read the host's networks to check --subnet against them: %w", err)
			}
			o.NAT = cni.Options{Subnet: subnet, Gateway: gw, DNS: dns, HostDNS: hostDNS, HostNetworks: networks}
			l := &o.L2Bridge
			l.Subnet, l.Gateway, l.DNS, l.HostDNS, l.DNSSearch, l.HostNetworks = subnet, gw, dns, hostDNS, search, networks
			if l.Adapters, err = cni.HostAdapters(); err != nil {
				return err
			}
			if l.Adapter == "" {
				if ip, err := config.DefaultRouteIP(""); err == nil {
					if a, ok := netip.AddrFromSlice(ip); ok {
						l.Adapter = cni.DefaultAdapter(a, networks, l.Adapters)
					}
				}
			}
			return podnet.Configure(cmd.OutOrStdout(), o, podnet.Env{
				HNS:               hns.New(),
				FS:                podnet.OSFS{},
				ContainerdVersion: podnet.InstalledContainerd(o.GOOS, layout.ContainerdDir),
				Now:               time.Now,
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Mode, "mode", cni.ModeNAT, "Pod network: nat (reachable from this host) or l2bridge (routable pod addresses)")
	fs.StringVar(&subnet, "subnet", "", "Pod subnet in CIDR form (required for nat); for l2bridge the node's pod range, by default its Node object's spec.podCIDR once the node has joined and run")
	fs.StringVar(&configFile, "config", configFile, "l2bridge without --subnet: the joined node's configuration, which names its database and node name")
	fs.StringVar(&gw, "gateway", "", "Gateway of the pod subnet (default: its first address); for l2bridge the host endpoint takes the next one")
	fs.StringSliceVar(&dns, "dns", nil, "DNS servers for pods, e.g. the cluster DNS service address (default: the host's resolvers)")
	fs.StringSliceVar(&search, "dns-search", nil, "l2bridge: DNS search domains for pods, e.g. svc.cluster.local,cluster.local")
	fs.StringVar(&o.L2Bridge.Adapter, "adapter", "", "l2bridge: the host adapter to bridge pods to (default: the one with the default route)")
	fs.StringVar(&o.L2Bridge.ClusterCIDR, "cluster-cidr", "", "l2bridge: the cluster's pod range, kept out of outbound NAT (required)")
	fs.StringVar(&o.L2Bridge.ServiceCIDR, "service-cidr", "", "l2bridge: the cluster's service range, kept out of outbound NAT and routed through the host (required)")
	fs.StringVar(&o.L2Bridge.Plugin, "plugin", cni.PluginSDNBridge, "l2bridge: the CNI plugin, sdnbridge (windows-container-networking) or win-bridge (containernetworking/plugins)")
	fs.StringVar(&o.L2Bridge.NetworkName, "network-name", cni.DefaultL2BridgeNetwork, "l2bridge: name of the HNS network and of the CNI network")
	fs.StringVarP(&o.Output, "output", "o", layout.CNIConfFile, "File to write, or - for standard output (default for l2bridge: "+cni.L2BridgeFileName+" in the same directory)")
	fs.StringVar(&o.CNIBinDir, "cni-bin-dir", o.CNIBinDir, "Directory of the CNI plugin executables, which containerd is pointed at")
	fs.StringVar(&o.ContainerdConfig, "containerd-config", o.ContainerdConfig, `containerd's config.toml to point at the CNI directories ("" leaves it alone)`)
	fs.BoolVar(&o.Force, "force", false, "Replace an existing CNI config file that differs")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Print what would be done, with the diff of config.toml, and change nothing")
	return cmd
}

// joinedPodCIDR is the pod range the cluster gave this node, from the Node
// object the node keeps in its database once it has joined and run.
func joinedPodCIDR(configFile string) (string, error) {
	host := config.CurrentHost(runtime.GOOS)
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
