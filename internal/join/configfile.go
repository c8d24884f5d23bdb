package join

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// ConfigOptions are the inputs of `edgecore config`: keadm's join flags and
// where the file goes. It writes what join writes, without joining.
type ConfigOptions struct {
	config.JoinOptions
	// Output is the file to write, or "-" for standard output.
	Output string
	// Offline skips the check that cloudcore answers.
	Offline bool
	// Overwrite replaces an existing file.
	Overwrite bool
	// Host is the host the file is for; Complete fills in its node IP.
	Host config.Host
}

// NewConfigOptions are config's defaults on host: the file in its default
// place.
func NewConfigOptions(host config.Host) *ConfigOptions {
	return &ConfigOptions{Output: config.NewLayout(host).ConfigFile, Host: host}
}

// AddFlags binds config's flags to o; the defaults are o's values.
func (o *ConfigOptions) AddFlags(fs *pflag.FlagSet) {
	o.JoinOptions.AddFlags(fs)
	fs.StringVarP(&o.Output, "output", "o", o.Output, "File to write, or - for standard output")
	fs.BoolVar(&o.Offline, "offline", o.Offline, "Do not check that cloudcore answers")
	fs.BoolVar(&o.Overwrite, "force", o.Overwrite, "Replace an existing configuration file")
}

// Complete takes the host's facts: unless offline, the address this host
// reaches the cloud from is the node IP the cloud can reach it back on.
func (o *ConfigOptions) Complete(host config.Host) {
	o.Host = host
	if o.Offline {
		return
	}
	if ip, err := config.DefaultRouteIP(o.CloudCoreIPPort); err == nil {
		o.Host.NodeIP = ip.String()
	}
}

// Validate checks what config's own flags hold; keadm's flags are judged
// with the configuration they make (config.JoinConfig).
func (o *ConfigOptions) Validate() error {
	if o.Output == "" {
		return errors.New(`--output is empty: give the file to write, or - for standard output`)
	}
	return nil
}

// WriteConfig renders the configuration o describes and writes it to
// o.Output (or out for "-"). reach checks that cloudcore answers (nil when
// offline). On Windows a file's mode only toggles read-only, so acls is
// what keeps the token from other accounts: a parent another account owns
// is refused before the token is written; after, the node's existing
// directories, or the file itself when it lies outside them, are
// restricted.
func WriteConfig(out io.Writer, o ConfigOptions, reach config.Reach, acls protect.Host) error {
	if o.Offline {
		reach = nil
	}
	c, rewrites, err := config.JoinConfig(o.JoinOptions, o.Host, reach)
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
	if o.Output == "-" {
		_, err := out.Write(data)
		return err
	}
	targets, err := configTargets(c, o.Host, o.Output)
	if err != nil {
		return err
	}
	if err := protect.Check(targets, acls); err != nil {
		return err
	}
	if err := config.WriteNewFile(o.Output, data, 0o600, o.Overwrite); err != nil {
		return err
	}
	if _, err := protect.Enforce(targets, acls, true); err != nil {
		return fmt.Errorf("wrote %s, but %w", o.Output, err)
	}
	fmt.Fprintf(out, "Wrote %s for node %s. Start edgecore with: %s --config %s\n",
		o.Output, c.Modules.Edged.HostnameOverride, config.ExecutableName(o.Host.GOOS), o.Output)
	return nil
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
	abs := output
	if !ospath.IsAbs(host.GOOS, abs) {
		// Relative to where config runs, which is this host.
		if abs, err = filepath.Abs(output); err != nil {
			return nil, fmt.Errorf("--output %s: %w", output, err)
		}
	}
	for _, t := range targets {
		if t.Restrict && ospath.Within(host.GOOS, t.Path, abs) {
			return targets, nil
		}
	}
	return append(targets, protect.Target{What: "the configuration with the join token", Path: abs, Restrict: true}), nil
}
