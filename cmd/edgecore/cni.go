package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
)

// newCNIConfigCommand writes the pod network containerd on Windows hands
// to its CNI plugin: nat, or l2bridge with its HNS network, and points
// containerd's config.toml at the CNI directories.
func newCNIConfigCommand(d *deps.Dependencies) *cobra.Command {
	o := podnet.NewOptions(d)
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
			".bak copy. Wrong input is refused before anything changes; a step that fails undoes the others.\n\n" +
			"containerd runs every program in the CNI bin folders as SYSTEM: each folder containerd will use is judged\n" +
			"entry by entry first, and a plugin or network another account owns or may change, a link or a file with\n" +
			"a second name is refused with its fix. A missing folder is created open to SYSTEM and Administrators only.",
		Example: "  edgecore.exe cni-config --subnet 10.244.2.0/24 --force\n" +
			"  edgecore.exe cni-config --mode l2bridge --subnet 10.244.2.0/24 --cluster-cidr 10.244.0.0/16 \\\n" +
			"      --service-cidr 10.96.0.0/12 --dns 10.96.0.10 --adapter Ethernet --dry-run",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if err := o.Complete(d); err != nil {
				return err
			}
			fmt.Fprint(out, o.PodRangeNote())
			if err := o.Validate(); err != nil {
				return err
			}
			return podnet.Configure(out, *o, podnet.HostEnv(d))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
