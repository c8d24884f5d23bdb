package main

import (
	"context"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/images"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/lifecycle"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
)

// newJoinCommand joins this host to a KubeEdge cloud in one command, with
// keadm join's flag names: it writes the configuration, installs edgecore
// as a Windows service and waits until the node is connected.
func newJoinCommand(d *deps.Dependencies) *cobra.Command {
	o := join.NewOptions(d)
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Join this host to a KubeEdge cloud and run edgecore as a Windows service",
		Long: "Join this host to the cloudcore at --cloudcore-ipport with the token from `keadm gettoken`:\n" +
			"restrict the node's directories (" + d.Layout.KubeEdgeDir + ", the database, the kubelet's root, logs)\n" +
			"to SYSTEM and Administrators with Administrators their owner, write the configuration into them, install and start\n" +
			"the edgecore service, and wait until the node certificates are issued and the hub is connected.\n" +
			"On a host without a container runtime it also installs the containerd the release bundles (--runtime) and\n" +
			"writes the pod network with cni-config's rules: l2bridge with the bundled win-bridge unless --mode says nat\n" +
			"(which needs Microsoft's nat.exe in the CNI bin folder). With the host's runtime it writes one only when --mode is given.\n" +
			"Each step is printed as it runs; a failure undoes what was done and names the fix.\n" +
			"Run it from PowerShell started with \"Run as administrator\". --dry-run prints the steps only.",
		Example: "  edgecore.exe join -e 192.168.1.10:10000 -t <output of keadm gettoken> --subnet 10.244.2.0/24 \\\n" +
			"      --cluster-cidr 10.244.0.0/16 --service-cidr 10.96.0.0/12 --dns 10.96.0.10 -l site=plant-1\n" +
			"  edgecore.exe join -e 192.168.1.10:10000 -t <token> --set modules.edged.tailoredKubeletConfig.maxPods=50 --dry-run",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			return join.Run(ctx, cmd.OutOrStdout(), *o, hostSystem(d, o.Host))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// interruptible is the command's context, cancelled by Ctrl+C so that join
// and reset roll back rather than leave half a node behind.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return lifecycle.ConsoleContext(ctx, runtime.GOOS, lifecycle.ProcessSignals{})
}

// hostSystem is what join and reset act on: d's host (as host, its node
// IP completed, says) with its files, services and ACLs.
func hostSystem(d *deps.Dependencies, host config.Host) join.System {
	return join.System{
		FS:       d.FS,
		Reach:    config.DialReach(reachTimeout),
		Elevated: d.Probes.Elevated,
		WriteConfig: func(path string, data []byte) error {
			// The file holds the join token until the certificates are
			// issued: only SYSTEM and Administrators may open it from its
			// first byte, wherever --config puts it.
			return config.WriteNewSecret(path, data, false, d.ACLs.CreateFile)
		},
		LoadConfig: func(path string) (*v1alpha2.EdgeCoreConfig, error) {
			c, _, err := config.Load(path, host)
			return c, err
		},
		RemoveToken:  func(path string) error { return config.RemoveToken(path, d.ACLs.CreateFile) },
		Protect:      d.ACLs,
		Services:     d.Services,
		Clock:        d.Clock,
		Runtime:      runtimeinstall.OSHost(d),
		ImportImages: images.ImportFolders(d),
		PodNet:       join.PodNetHost{Facts: podnet.SystemFacts(), Env: podnet.HostEnv(d)},
	}
}
