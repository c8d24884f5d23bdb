package main

import (
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/reset"
)

// newResetCommand undoes a join: it removes the service and what join
// wrote, and leaves containerd and the CNI configuration alone.
func newResetCommand(d *deps.Dependencies) *cobra.Command {
	o := reset.NewOptions(d)
	o.NetworkOf = func(d *deps.Dependencies) reset.NetworkRemover { return podnet.HostRemover(d) }
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Remove the edgecore service and what join set up on this host",
		Long: "Stop and delete the edgecore service, then remove the configuration, the node certificates,\n" +
			"the database (unless --keep-data), the upgrade backups and journal, and edgecore's logs. Only files\n" +
			"inside the node's own directories are removed: a file the configuration names elsewhere is left and\n" +
			"named, and a --config that cannot be read as a configuration is kept. containerd, its containers and images,\n" +
			"the CNI configuration and the kubelet's directory are left alone; --network also removes the HNS\n" +
			"network and host endpoint that cni-config created. It asks before removing anything; without a\n" +
			"terminal to ask on, pass --force.",
		Example: "  edgecore.exe reset\n  edgecore.exe reset --force --keep-data\n  edgecore.exe reset --network",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			in := cmd.InOrStdin()
			// Only a console can answer the question; a pipe, a file or a
			// remote session without one cannot.
			interactive := in == os.Stdin && term.IsTerminal(int(os.Stdin.Fd()))
			ctx, stop := interruptible(cmd)
			defer stop()
			return reset.Run(ctx, in, cmd.OutOrStdout(), interactive, *o, hostSystem(d, o.Host))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
