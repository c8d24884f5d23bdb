package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/configfile"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// reachTimeout bounds each check that cloudcore answers.
const reachTimeout = 5 * time.Second

// newConfigCommand writes a complete configuration for joining a cloud, with
// keadm join's flag names.
func newConfigCommand(d *deps.Dependencies) *cobra.Command {
	o := configfile.NewOptions(d)
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Write a complete configuration for joining a KubeEdge cloud",
		Long: "Write a complete edgecore configuration for this host that joins the cloudcore at --cloudcore-ipport\n" +
			"with the token from `keadm gettoken`. Nothing is written when an input is wrong or cloudcore\n" +
			"does not answer (use --offline to prepare a configuration away from the network).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			return configfile.Write(cmd.OutOrStdout(), *o, config.DialReach(reachTimeout), d.ACLs)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
