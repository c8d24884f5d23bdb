package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/preflight"
)

// newPreflightCommand checks the host before edgecore is started or joined.
func newPreflightCommand(host config.Host) *cobra.Command {
	var (
		configFile string
		offline    bool
	)
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check this host for what edgecore needs, with a fix for every failure",
		Long: "Check the Windows build, the Containers feature, Administrator rights, containerd and its CNI\n" +
			"configuration, the sandbox image, the way to cloudcore, the clock, running kubelets and free disk.\n" +
			"Exits 1 when any check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, note, err := preflightConfig(configFile, host)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(cmd.OutOrStdout(), note)
			}
			probes := preflight.SystemProbes(host)
			if offline {
				// Air-gapped sites have no registry to ask; the row then
				// says the image was not checked.
				probes.ImagePlatforms = nil
			}
			rows := preflight.Run(context.Background(), cfg, probes)
			if err := preflight.Render(cmd.OutOrStdout(), rows); err != nil {
				return err
			}
			if code := preflight.ExitCode(rows); code != 0 {
				return &ExitError{Code: code, Err: errors.New("preflight found problems; fix the FAIL rows above")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", config.NewLayout(host).ConfigFile, "Configuration whose settings are checked")
	cmd.Flags().BoolVar(&offline, "offline", false, "Do not ask the image registry whether the sandbox image has a Windows variant")
	return cmd
}

// preflightConfig takes the checked settings from the configuration file.
// Without one the node has not joined yet: the host is checked against the
// defaults, and the cloudcore and certificate rows are skipped, since the
// defaults name no real cloudcore and join checks it itself.
func preflightConfig(path string, host config.Host) (preflight.Config, string, error) {
	c, _, err := config.Load(path, host)
	var missing *config.MissingFileError
	switch {
	case errors.As(err, &missing):
		pc, err := preflight.BeforeJoin(host)
		if err != nil {
			return preflight.Config{}, "", err
		}
		return pc, fmt.Sprintf("No configuration at %s yet: checking this host against the defaults; join checks cloudcore.", path), nil
	case err != nil:
		return preflight.Config{}, "", err
	}
	return preflight.FromConfig(c, host), "", nil
}
