package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
)

// newUpgradeCommand replaces the binary the edgecore service runs with the
// one in a release zip, and rolls back when the new version is not
// healthy.
func newUpgradeCommand(d *deps.Dependencies) *cobra.Command {
	o := upgrade.NewUpgradeOptions()
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade the edgecore service from a release zip; roll back if the new version is not healthy",
		Long: "Verify the release zip (its SHA256SUMS and manifest, the platform, and a version newer than the installed one\n" +
			"unless --allow-downgrade), back up the service's binary, configuration and database to " + upgrade.NewPaths(d.Layout).BackupRoot + "\\<version>,\n" +
			"replace the binary, restart the service and wait until it keeps running, the hub is connected and the node\n" +
			"is Ready (--timeout). On any failure the backup is put back and the previous version started again.\n" +
			"When join installed the release's container runtime and the package's differs, it is backed up, swapped\n" +
			"(containerd restarted; running containers keep running) and checked with edgecore, and rolled back with it.\n" +
			"Each step is printed; the last line is the result for automation, and the exit code is 0 (upgraded or\n" +
			"already there), 1 (refused, nothing changed), 2 (failed and rolled back) or 3 (the rollback failed too).\n" +
			"An upgrade interrupted by a power cut is finished or rolled back by the next edgecore that starts, or by\n" +
			"the next upgrade or rollback command. Run it from PowerShell started with \"Run as administrator\".",
		Example: `  edgecore.exe upgrade --package "C:\Users\admin\Downloads\edgecore-v0.2.0-windows-amd64.zip"` + "\n" +
			`  edgecore.exe upgrade --package D:\edgecore-v0.2.0-windows-amd64.zip --sha256 <Get-FileHash output> --timeout 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if err := o.Complete(d); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return finish(out, upgrade.Refused(upgrade.KindUpgrade, err))
			}
			env := upgrade.HostEnv(d)
			ctx, stop := interruptible(cmd)
			defer stop()
			if o.Resume {
				r, ok, err := upgrade.Resume(ctx, out, env, o.Journal)
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintf(out, "No unfinished upgrade or rollback in %s.\n", env.Paths.Journal)
					return nil
				}
				return finish(out, r)
			}
			return finish(out, upgrade.Upgrade(ctx, out, env, upgrade.HostFacts(d.Host), *o))
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(newUpgradeConfirmCommand(d), newUpgradeUnholdCommand(d))
	return cmd
}

// newUpgradeConfirmCommand lets a NodeUpgradeJob that waits for
// confirmation (requireConfirmation) go on: `keadm ctl confirm` on a
// Linux node.
func newUpgradeConfirmCommand(d *deps.Dependencies) *cobra.Command {
	o := upgrade.NewConfirmOptions()
	paths := upgrade.NewPaths(d.Layout)
	cmd := &cobra.Command{
		Use:   "confirm",
		Short: "Confirm the NodeUpgradeJob that waits on this node for confirmation (requireConfirmation), so that it upgrades",
		Long: "A NodeUpgradeJob created with requireConfirmation: true stops after its check, and its status shows the\n" +
			"node at WaitingConfirmation, phase InProgress, until an administrator on the node confirms it. This command\n" +
			"confirms the job that waits (recorded in " + paths.Waiting + ") and waits (--timeout) for the\n" +
			"edgecore service to take the confirmation; the job then backs up and upgrades as any other.\n" +
			"Run it from PowerShell started with \"Run as administrator\".",
		Example: "  edgecore.exe upgrade confirm\n  edgecore.exe upgrade confirm --job upgrade-to-v1.23.2",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			return upgrade.ConfirmAndWait(ctx, cmd.OutOrStdout(), upgrade.HostEnv(d), *o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// newUpgradeUnholdCommand releases pods the node holds because of the
// annotation edge.kubeedge.io/hold-upgrade: `keadm ctl unhold-upgrade` on
// a Linux node.
func newUpgradeUnholdCommand(d *deps.Dependencies) *cobra.Command {
	o := upgrade.NewUnholdOptions()
	paths := upgrade.NewPaths(d.Layout)
	cmd := &cobra.Command{
		Use:   "unhold [POD...] [--namespace NAMESPACE] [--all]",
		Short: "Release pods this node holds because of the annotation " + upgrade.HoldUpgradeAnnotation + " (keadm ctl unhold-upgrade)",
		Long: "A pod annotated " + upgrade.HoldUpgradeAnnotation + ": \"true\" that the cloud sends the node before it has started is\n" +
			"held: it stays Pending with the condition HeldUpgrade until an administrator on the node releases it. This\n" +
			"command checks the pods against the node's database (each must carry the annotation and be Pending), asks\n" +
			"the edgecore service to release them (through " + paths.Unhold + "), and waits (--timeout) until it\n" +
			"has; the kubelet then starts them. --all releases every pod the node holds.\n" +
			"Run it from PowerShell started with \"Run as administrator\".",
		Example: "  edgecore.exe upgrade unhold plc-gateway-0 -n shop-floor\n  edgecore.exe upgrade unhold shop-floor/plc-gateway-0 default/web-1\n  edgecore.exe upgrade unhold --all",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Pods = args
			if err := prepare(o, d); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			return upgrade.Unhold(ctx, cmd.OutOrStdout(), upgrade.HostEnv(d), upgrade.HostFacts(d.Host), *o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// newRollbackCommand puts the last backup back.
func newRollbackCommand(d *deps.Dependencies) *cobra.Command {
	o := upgrade.NewRollbackOptions()
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Restore the binary, configuration and database the last upgrade backed up, and restart the service",
		Long: "Restore a backup from " + upgrade.NewPaths(d.Layout).BackupRoot + ": by default the one the last upgrade made of the\n" +
			"version before it, else the newest backup of another version than the running one (--to picks one).\n" +
			"Every file is checked against the backup's checksums before anything is stopped. The last line is\n" +
			"the result for automation; the exit code is 0 (restored), 1 (refused, nothing changed) or 3 (failed).",
		Example: "  edgecore.exe rollback\n  edgecore.exe rollback --to v0.1.0",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if err := o.Complete(d); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return finish(out, upgrade.Refused(upgrade.KindRollback, err))
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			return finish(out, upgrade.Rollback(ctx, out, upgrade.HostEnv(d), upgrade.HostFacts(d.Host), *o))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// finish prints the result line and turns the result into the exit code.
func finish(out io.Writer, r upgrade.Result) error {
	fmt.Fprintln(out, r.Line())
	if code := r.ExitCode(); code != 0 {
		return &ExitError{Code: code, Err: errors.New(r.Reason)}
	}
	return nil
}
