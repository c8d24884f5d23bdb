package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// newUpgradeCommand replaces the binary the edgecore service runs with the
// one in a release zip, and rolls back when the new version is not
// healthy.
func newUpgradeCommand() *cobra.Command {
	o := upgrade.UpgradeOptions{Timeout: upgrade.DefaultTimeout, Service: service.DefaultName}
	var (
		resume  bool
		journal string
	)
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade the edgecore service from a release zip; roll back if the new version is not healthy",
		Long: "Verify the release zip (its SHA256SUMS and manifest, the platform, and a version newer than the installed one\n" +
			"unless --allow-downgrade), back up the service's binary, configuration and database to " + upgrade.NewPaths(hostLayout()).BackupRoot + "\\<version>,\n" +
			"replace the binary, restart the service and wait until it keeps running, the hub is connected and the node\n" +
			"is Ready (--timeout). On any failure the backup is put back and the previous version started again.\n" +
			"Each step is printed; the last line is the result for automation, and the exit code is 0 (upgraded or\n" +
			"already there), 1 (refused, nothing changed), 2 (failed and rolled back) or 3 (the rollback failed too).\n" +
			"An upgrade interrupted by a power cut is finished or rolled back by the next edgecore that starts, or by\n" +
			"the next upgrade or rollback command. Run it from PowerShell started with \"Run as administrator\".",
		Example: `  edgecore.exe upgrade --package "C:\Users\admin\Downloads\edgecore-v0.2.0-windows-amd64.zip"` + "\n" +
			`  edgecore.exe upgrade --package D:\edgecore-v0.2.0-windows-amd64.zip --sha256 <Get-FileHash output> --timeout 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host := config.CurrentHost(runtime.GOOS)
			env := upgrade.HostEnv(host)
			out := cmd.OutOrStdout()
			ctx, stop := interruptible(cmd)
			defer stop()
			if resume {
				r, ok, err := upgrade.Resume(ctx, out, env, journal)
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintf(out, "No unfinished upgrade or rollback in %s.\n", env.Paths.Journal)
					return nil
				}
				return finish(out, r)
			}
			if o.Package != "" {
				// The package is read from this directory, whatever the
				// process that drives the upgrade later runs in.
				abs, err := filepath.Abs(o.Package)
				if err != nil {
					return fmt.Errorf("--package %s: %w", o.Package, err)
				}
				o.Package = abs
			}
			return finish(out, upgrade.Upgrade(ctx, out, env, upgrade.HostFacts(host), o))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Package, "package", "", "Release zip to install: edgecore-<version>-windows-amd64.zip as `make package` builds it")
	fs.StringVar(&o.SHA256, "sha256", "", "Expected SHA-256 of the zip (as Get-FileHash or sha256sum prints it), checked before anything else")
	fs.BoolVar(&o.AllowDowngrade, "allow-downgrade", false, "Install a version older than the installed one")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long the new version may take to keep running with the hub connected and the node Ready")
	fs.BoolVar(&resume, "resume", false, "Finish an upgrade or rollback that an earlier process left unfinished, and nothing else")
	fs.StringVar(&journal, "journal", "", "With --resume: carry out this planned journal (used by the NodeUpgradeJob executor)")
	fs.MarkHidden("journal")
	return cmd
}

// newRollbackCommand puts the last backup back.
func newRollbackCommand() *cobra.Command {
	o := upgrade.RollbackOptions{Timeout: upgrade.DefaultTimeout, Service: service.DefaultName}
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Restore the binary, configuration and database the last upgrade backed up, and restart the service",
		Long: "Restore a backup from " + upgrade.NewPaths(hostLayout()).BackupRoot + ": by default the one the last upgrade made of the\n" +
			"version before it, else the newest backup of another version than the running one (--to picks one).\n" +
			"Every file is checked against the backup's checksums before anything is stopped. The last line is\n" +
			"the result for automation; the exit code is 0 (restored), 1 (refused, nothing changed) or 3 (failed).",
		Example: "  edgecore.exe rollback\n  edgecore.exe rollback --to v0.1.0",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host := config.CurrentHost(runtime.GOOS)
			out := cmd.OutOrStdout()
			ctx, stop := interruptible(cmd)
			defer stop()
			return finish(out, upgrade.Rollback(ctx, out, upgrade.HostEnv(host), upgrade.HostFacts(host), o))
		},
	}
	cmd.Flags().StringVar(&o.Version, "to", "", "Version whose backup to restore, e.g. v0.1.0")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "How long the restored version may take to keep running")
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
