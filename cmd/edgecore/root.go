package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/term"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/logfile"
	"github.com/kubeedge-windows/edgecore/internal/node"
	"github.com/kubeedge-windows/edgecore/internal/version"
)

// rootOptions are the flags of edgecore itself: running the node, or
// printing a sample configuration or the version.
type rootOptions struct {
	node          node.Options
	MinConfig     bool
	DefaultConfig bool
	Version       bool
}

// Complete takes what the node's flags leave to the host from d.
func (o *rootOptions) Complete(d *deps.Dependencies) error { return o.node.Complete(d) }

// Validate checks the node's flags.
func (o *rootOptions) Validate() error { return o.node.Validate() }

// options is what every command's options keep to: Complete takes what
// the flags leave to the host from the process's dependencies, and prints
// nothing; Validate then checks the result, naming the flag to fix.
type options interface {
	Complete(d *deps.Dependencies) error
	Validate() error
}

// prepare completes and validates o.
func prepare(o options, d *deps.Dependencies) error {
	if err := o.Complete(d); err != nil {
		return err
	}
	return o.Validate()
}

// ExitError carries the exit code a failed command ends the process with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// NewCommand builds the edgecore command line for the process whose
// dependencies are d: the flags' defaults and every command's host facts
// come from its host and layout.
func NewCommand(d *deps.Dependencies) *cobra.Command {
	host, layout := d.Host, d.Layout
	opts := &rootOptions{node: node.Options{
		ConfigFile: layout.ConfigFile,
		Logs:       logfile.DefaultOptions(layout.LogFile),
		Host:       host,
	}}
	cmd := &cobra.Command{
		Use:   config.ExecutableName(host.GOOS),
		Short: "KubeEdge edge node agent for Windows Server",
		Long: "edgecore runs a KubeEdge edge node: the embedded kubelet (edged), the link to cloudcore (edgehub),\n" +
			"the local metadata store (metamanager), device twins, the event and service buses and edge streams.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			switch {
			case opts.Version:
				_, err := fmt.Fprint(out, version.Get())
				return err
			case opts.MinConfig:
				return printSample(out, config.KindMinimal, host)
			case opts.DefaultConfig:
				return printSample(out, config.KindDefault, host)
			}
			opts.node.LogFileGiven = cmd.Flags().Changed(logfile.FlagFile)
			if err := prepare(opts, d); err != nil {
				return err
			}
			return node.Main(opts.node, d)
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the versions of edgecore, KubeEdge and Kubernetes it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), version.Get())
			return err
		},
	})

	cmd.AddCommand(newConfigCommand(d), newJoinCommand(d), newResetCommand(d), newServiceCommand(d),
		newPreflightCommand(d), newCNIConfigCommand(d), newUpgradeCommand(d), newRollbackCommand(d), newTakeoverCommand(d),
		newImagesCommand(d))
	cmd.CompletionOptions.DisableDefaultCmd = true

	named := opts.flags(cmd.Name())
	opts.node.Logs.AddFlags(named.FlagSet("logging"))
	fs := cmd.Flags()
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		fmt.Fprintf(c.OutOrStderr(), "Usage:\n  %s\n", c.UseLine())
		if c.HasAvailableSubCommands() {
			fmt.Fprintf(c.OutOrStderr(), "  %s [command]\n\nCommands:\n", c.CommandPath())
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					fmt.Fprintf(c.OutOrStderr(), "  %-12s %s\n", sub.Name(), sub.Short)
				}
			}
		}
		fmt.Fprintln(c.OutOrStderr())
		if c == cmd {
			cliflag.PrintSections(c.OutOrStderr(), named, cols)
		} else if c.HasAvailableLocalFlags() {
			fmt.Fprintf(c.OutOrStderr(), "Flags:\n%s", c.LocalFlags().FlagUsagesWrapped(cols))
		}
		return nil
	})
	return cmd
}

func (o *rootOptions) flags(name string) (fss cliflag.NamedFlagSets) {
	fs := fss.FlagSet("edgecore")
	o.node.AddFlags(fs)
	fs.BoolVar(&o.MinConfig, "minconfig", false, "Print a minimal configuration for this platform and exit.")
	fs.BoolVar(&o.DefaultConfig, "defaultconfig", false, "Print the full default configuration for this platform and exit.")
	fs.BoolVar(&o.Version, "version", false, "Print version information and exit.")
	global := fss.FlagSet("logging")
	globalflag.AddGlobalFlags(global, name)
	// AddGlobalFlags adds --help too; cobra owns that flag.
	global.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			f.Hidden = true
		}
	})
	return fss
}

func printSample(out io.Writer, kind string, host config.Host) error {
	text, err := config.Render(kind, host)
	if err != nil {
		return err
	}
	_, err = out.Write(text)
	return err
}

// run runs the command with the process's dependencies d and returns the
// process exit code, printing any error on stderr in one line.
func run(args []string, d *deps.Dependencies) int {
	cmd := NewCommand(d)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", config.ExecutableName(d.Host.GOOS), err)
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return 1
}
