package servicectl

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// InstallOptions are the inputs of `edgecore.exe service install`.
type InstallOptions struct {
	// ConfigFile is the configuration the service runs with (--config).
	ConfigFile string
	// Executable is the edgecore.exe the service runs: the one running
	// the command, which Complete finds.
	Executable string
	Host       config.Host
	// Layout is the node's directories on Host.
	Layout config.Layout
}

// NewInstallOptions are install's defaults on d's host: the configuration
// in its default place.
func NewInstallOptions(d *deps.Dependencies) *InstallOptions {
	return &InstallOptions{ConfigFile: d.Layout.ConfigFile, Host: d.Host, Layout: d.Layout}
}

// AddFlags binds install's flags to o; the defaults are o's values.
func (o *InstallOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Configuration file the service runs with")
}

// Complete takes the host and the executable the service is to run (this
// program) from d and makes --config absolute, in canonical form as join
// writes it: the service starts in System32, where a relative path would
// point, and C:/etc/kubeedge/x names the same file as C:\etc\kubeedge\x.
func (o *InstallOptions) Complete(d *deps.Dependencies) error {
	o.Host, o.Layout = d.Host, d.Layout
	exe, err := d.ExecutablePath()
	if err != nil {
		return fmt.Errorf("find edgecore.exe: %w", err)
	}
	o.Executable = exe
	if o.ConfigFile == "" {
		return nil
	}
	if ospath.IsAbs(o.Host.GOOS, o.ConfigFile) {
		o.ConfigFile = ospath.Clean(o.Host.GOOS, o.ConfigFile)
		return nil
	}
	abs, err := filepath.Abs(o.ConfigFile)
	if err != nil {
		return fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	o.ConfigFile = abs
	return nil
}

// Validate checks install's flags.
func (o InstallOptions) Validate() error {
	if o.ConfigFile == "" {
		return errors.New("--config is empty: give the configuration the service runs with, or leave the flag out for " +
			o.Layout.ConfigFile)
	}
	return nil
}

// RunInstall installs the service that runs o.Executable with
// o.ConfigFile and restricts the node's directories (Install), and the
// configuration and the upgrade settings beside it wherever they lie:
// the service reads both as SYSTEM, the first holds the join token until
// the certificates are issued, the second names where the binaries that
// run as SYSTEM come from. The configuration must load first: one that
// cannot would only make the service fail and restart for ever. Warnings
// of the service manager go to errOut; what was installed, repaired, and
// how to start it, to out.
func RunInstall(out, errOut io.Writer, o InstallOptions, sys System) error {
	cfg, _, err := config.Load(o.ConfigFile, o.Host)
	if err != nil {
		return err
	}
	layout := o.Layout
	files := protect.ConfigFiles(o.ConfigFile, upgrade.SettingsPath(o.Host.GOOS, o.ConfigFile))
	targets, err := protect.Targets(cfg, layout, o.Executable, files...)
	if err != nil {
		return err
	}
	// A host shutdown waits for the pods' grace periods of this
	// configuration, then for edgecore's own stop.
	c := service.DefaultConfig(o.Executable, o.ConfigFile, config.NodeShutdownOf(cfg, o.Host.GOOS).Grace)
	// The line the service manager will run, refused before anything
	// changes if it cannot be written.
	line, err := c.CommandLine()
	if err != nil {
		return err
	}
	warnings, repairs, err := Install(c, layout.LogDir, targets, sys)
	for _, w := range warnings {
		fmt.Fprintln(errOut, "warning:", w)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Installed service %s: %s\n", c.Name, line)
	for _, r := range repairs {
		fmt.Fprintln(out, r)
	}
	fmt.Fprintf(out, "Its logs, panic log and stack dumps go to %s, open to SYSTEM and Administrators only.\n", layout.LogDir)
	fmt.Fprintf(out, "Start it with: %s service start\n", cli)
	return nil
}
