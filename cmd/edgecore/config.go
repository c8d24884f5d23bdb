package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// reachTimeout bounds each check that cloudcore answers.
const reachTimeout = 5 * time.Second

// newConfigCommand writes a complete configuration for joining a cloud, with
// keadm join's flag names.
func newConfigCommand(host config.Host) *cobra.Command {
	var (
		o         config.JoinOptions
		output    string
		offline   bool
		overwrite bool
	)
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Write a complete configuration for joining a KubeEdge cloud",
		Long: "Write a complete edgecore configuration for this host that joins the cloudcore at --cloudcore-ipport\n" +
			"with the token from `keadm gettoken`. Nothing is written when an input is wrong or cloudcore\n" +
			"does not answer (use --offline to prepare a configuration away from the network).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A copy: the node IP below is this run's, towards its cloud.
			host := host
			var reach config.Reach
			if !offline {
				reach = config.DialReach(reachTimeout)
				// The address this host reaches the cloud from is the node IP
				// the cloud can reach it back on.
				if ip, err := config.DefaultRouteIP(o.CloudCoreIPPort); err == nil {
					host.NodeIP = ip.String()
				}
			}
			c, rewrites, err := config.JoinConfig(o, host, reach)
			if err != nil {
				return err
			}
			for _, r := range rewrites {
				klog.InfoS("Rewrote value into its Windows form", "field", r.Field, "from", r.From, "to", r.To)
			}
			data, err := config.JoinFile(c, o.CloudCoreIPPort, "")
			if err != nil {
				return err
			}
			if output == "-" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			// On Windows the mode only toggles read-only: protect's
			// description is what keeps the token from other accounts.
			// A parent another account owns is refused before the token
			// is written; after, the node's existing directories, or
			// the file itself when it lies outside them, are restricted.
			targets, err := configTargets(c, host, output)
			if err != nil {
				return err
			}
			if err := protect.Check(targets, protect.HostACLs()); err != nil {
				return err
			}
			if err := config.WriteNewFile(output, data, 0o600, overwrite); err != nil {
				return err
			}
			if _, err := protect.Enforce(targets, protect.HostACLs(), true); err != nil {
				return fmt.Errorf("wrote %s, but %w", output, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Wrote %s for node %s. Start edgecore with: %s --config %s\n",
				output, c.Modules.Edged.HostnameOverride, config.ExecutableName(host.GOOS), output)
			return nil
		},
	}
	fs := cmd.Flags()
	o.AddFlags(fs)
	fs.StringVarP(&output, "output", "o", config.NewLayout(host).ConfigFile, "File to write, or - for standard output")
	fs.BoolVar(&offline, "offline", false, "Do not check that cloudcore answers")
	fs.BoolVar(&overwrite, "force", false, "Replace an existing configuration file")
	return cmd
}

// configTargets are the paths `config` protects: the node's directories,
// and the written file when it lies outside them (an --output in the
// current directory still holds the token). None outside Windows, where
// the file's mode 0600 does.
func configTargets(c *v1alpha2.EdgeCoreConfig, host config.Host, output string) ([]protect.Target, error) {
	l := config.NewLayout(host)
	targets, err := protect.Targets(c, l, "")
	if err != nil || host.GOOS != config.Windows {
		return targets, err
	}
	abs, err := filepath.Abs(output)
	if err != nil {
		return nil, fmt.Errorf("--output %s: %w", output, err)
	}
	for _, t := range targets {
		if t.Restrict && ospath.Within(host.GOOS, t.Path, abs) {
			return targets, nil
		}
	}
	return append(targets, protect.Target{What: "the configuration with the join token", Path: abs, Restrict: true}), nil
}
