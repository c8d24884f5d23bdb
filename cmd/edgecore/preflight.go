package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/preflight"
)

// newPreflightCommand checks the host before edgecore is started or joined.
func newPreflightCommand(d *deps.Dependencies) *cobra.Command {
	o := preflight.NewOptions(d)
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check this host for what edgecore needs, with a fix for every failure",
		Long: "Check the Windows build, the Containers feature, Administrator rights, containerd and its CNI\n" +
			"configuration, the sandbox image, the way to cloudcore, the clock, running kubelets and free disk.\n" +
			"Exits 1 when any check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			code, err := preflight.RunChecks(context.Background(), cmd.OutOrStdout(), *o, preflight.SystemProbes(d))
			if errors.Is(err, preflight.ErrProblems) {
				return &ExitError{Code: code, Err: err}
			}
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
