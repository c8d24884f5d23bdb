package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
)

// newCNIConfigCommand writes the nat network configuration containerd on
// Windows hands to its CNI plugin.
func newCNIConfigCommand() *cobra.Command {
	var (
		o         cni.Options
		output    string
		overwrite bool
	)
	cmd := &cobra.Command{
		Use:   "cni-config",
		Short: "Write a nat CNI configuration for containerd on Windows",
		Long: "Write the nat network configuration containerd reads on Windows: the pod subnet, a gateway inside\n" +
			"it and explicit DNS servers. Nothing is written when the subnet, gateway or DNS servers are wrong.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.DNS) == 0 {
				resolvers, err := cni.HostResolvers()
				if err != nil {
					return fmt.Errorf("--dns was not given and the host's DNS servers cannot be read (%v): pass --dns", err)
				}
				o.HostDNS = resolvers
			}
			networks, err := cni.HostNetworks()
			if err != nil {
				return fmt.Errorf("read the host's networks to check --subnet against them: %w", err)
			}
			o.HostNetworks = networks
			data, err := cni.Generate(o)
			if err != nil {
				return err
			}
			if output == "-" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			if err := config.WriteNewFile(output, data, 0o644, overwrite); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Wrote %s. Restart containerd to load it: Restart-Service containerd\n", output)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Subnet, "subnet", "", "Pod subnet in CIDR form, e.g. 10.244.2.0/24 (required)")
	fs.StringVar(&o.Gateway, "gateway", "", "Gateway of the pod subnet (default: its first address)")
	fs.StringSliceVar(&o.DNS, "dns", nil, "DNS servers for pods (default: the host's resolvers)")
	fs.StringVarP(&output, "output", "o", hostLayout().CNIConfFile, "File to write, or - for standard output")
	fs.BoolVar(&overwrite, "force", false, "Replace an existing file")
	return cmd
}
