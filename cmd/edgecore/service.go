package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/servicectl"
)

// newServiceCommand controls the edgecore Windows service.
func newServiceCommand(d *deps.Dependencies) *cobra.Command {
	layout := d.Layout
	name := servicectl.Name
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install, remove, start, stop or show the edgecore Windows service, or dump its goroutine stacks",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	o := servicectl.NewInstallOptions(d)
	install := &cobra.Command{
		Use:   "install",
		Short: "Install edgecore as a service that starts with Windows (after containerd) and restarts after failures",
		Long: "Install edgecore as a service that starts with Windows (after containerd) and restarts after failures.\n" +
			"The node's directories are restricted to SYSTEM and Administrators, owned by Administrators; an edgecore.exe\n" +
			"in a directory other accounts may change, or a node directory another account owns, is refused.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(o, d); err != nil {
				return err
			}
			return servicectl.RunInstall(cmd.OutOrStdout(), cmd.ErrOrStderr(), *o, servicectl.HostSystem(d))
		},
	}
	o.AddFlags(install.Flags())

	simple := func(use, short string, do func() error, done string) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := do(); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), done)
				return nil
			},
		}
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Say whether the service is installed and running, and name a panic log a crash left",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := servicectl.Status(name, layout.LogFile, servicectl.HostSystem(d))
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), out)
			return nil
		},
	}
	dump := &cobra.Command{
		Use:   "dump",
		Short: "Have the running service write every goroutine's stack to a file, and print its path",
		Long: "Signal the running service's event Global\\stackdump-<pid>: edgecore writes the stacks of all its goroutines\n" +
			"to a file beside its log, " + layout.LogDir + ", which this command waits for and names.\n" +
			"Use it when the node hangs, before restarting it. Run it from an elevated prompt.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd)
			defer stop()
			path, err := servicectl.Dump(ctx, name, layout.LogFile, servicectl.DumpTimeout, servicectl.HostSystem(d))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Goroutine stacks written to %s\n", path)
			return nil
		},
	}
	cmd.AddCommand(install,
		simple("uninstall", "Stop and remove the service", func() error {
			return d.Services.Uninstall(name)
		}, "Service "+name+" removed."),
		simple("start", "Start the service and wait until it runs", func() error {
			return d.Services.Start(name)
		}, "Service "+name+" is running."),
		simple("stop", "Stop the service and wait until it has stopped", func() error {
			return d.Services.Stop(name)
		}, "Service "+name+" is stopped."),
		status, dump)
	return cmd
}
