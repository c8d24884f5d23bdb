package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/takeover"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/internal/version"
)

// newTakeoverCommand moves a node that upstream's keadm joined to this
// build.
func newTakeoverCommand(d *deps.Dependencies) *cobra.Command {
	o := takeover.NewOptions(d)
	cmd := &cobra.Command{
		Use:   "takeover",
		Short: "Take over a node that upstream's keadm joined: keep its name, certificates, database and pods, run this build",
		Long: "Read the service upstream's keadm (v1.23) installed and the configuration it runs with; keep the node's name,\n" +
			"certificates, database and running containers; change in the configuration only what this build needs\n" +
			"(windowsService: false, the join token blanked); refuse anything in the node's folders keadm does not leave there;\n" +
			"restrict the node's folders as join does; point the service at\n" +
			"this build's command line; then, as an upgrade, back up keadm's binary, configuration and database, put this\n" +
			"edgecore.exe and the changed configuration in their place and wait until the node is Ready again. If it is not,\n" +
			"everything is put back and keadm's edgecore runs as before. Exit codes: 0 taken over, 1 refused (nothing\n" +
			"changed), 2 put back, 3 putting back failed too. See docs/from-keadm.md. Run it from an elevated PowerShell.",
		Example: "  edgecore.exe takeover --dry-run\n  edgecore.exe takeover --timeout 5m --token <the output of keadm gettoken>",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			err := takeover.Run(ctx, cmd.OutOrStdout(), *o, takeoverSystem(d))
			var failed *takeover.ResultError
			if errors.As(err, &failed) {
				return &ExitError{Code: failed.Result.ExitCode(), Err: err}
			}
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// takeoverSystem is d's host as the takeover reads and changes it.
func takeoverSystem(d *deps.Dependencies) takeover.System {
	env := upgrade.HostEnv(d)
	return takeover.System{
		Services: env.Services,
		ReadFile: os.ReadFile,
		Exists: func(p string) (bool, error) {
			_, err := os.Stat(p)
			if errors.Is(err, os.ErrNotExist) {
				return false, nil
			}
			return err == nil, err
		},
		ReadDir:  os.ReadDir,
		Elevated: d.Probes.Elevated,
		Protect:  d.ACLs,
		Stamp:    version.OfFile,
		Adopt: func(ctx context.Context, out io.Writer, a upgrade.Adoption) (upgrade.Result, error) {
			return upgrade.Adopt(ctx, out, env, a)
		},
		Version: version.Get().Version,
	}
}
