package configfile

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
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// Options are the inputs of `edgecore config`: keadm's join flags and
// where the file goes. It writes what join writes, without joining.
type Options struct {
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

// NewOptions are config's defaults on d's host: the file in its
// default place.
func NewOptions(d *deps.Dependencies) *Options {
	return &Options{Output: d.Layout.ConfigFile, Host: d.Host}
}

// AddFlags binds config's flags to o; the defaults are o's values.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.JoinOptions.AddFlags(fs)
	fs.StringVarP(&o.Output, "output", "o", o.Output, "File to write, or - for standard output")
	fs.BoolVar(&o.Offline, "offline", o.Offline, "Do not check that cloudcore answers")
	fs.BoolVar(&o.Overwrite, "force", o.Overwrite, "Replace an existing configuration file")
}

// Complete takes d's host facts: unless offline, the address this host
// reaches the cloud from is the node IP the cloud can reach it back on.
func (o *Options) Complete(d *deps.Dependencies) error {
	o.Host = d.Host
	if o.Offline {
		return nil
	}
	if ip, err := config.DefaultRouteIP(o.CloudCoreIPPort); err == nil {
		o.Host.NodeIP = ip.String()
	}
	return nil
}

// Validate checks what config's own flags hold; keadm's flags are judged
// with the configuration they make (config.JoinConfig).
func (o *Options) Validate() error {
	if o.Output == "" {
		return errors.New(`--output is empty: give the file to write, or - for standard output`)
	}
	return nil
}

// Write renders the configuration o describes and writes it to
// o.Output (or out for "-"). reach checks that cloudcore answers (nil when
// offline). On Windows a file's mode only toggles read-only, so acls is
// what keeps the token from other accounts: a parent another account owns
// or may rename is refused before the token is written; then the file's
// directory is made (protect.Create) and the node's directories are
// restricted, so that a file written into one of them is restricted from
// its first byte; after, the file itself is restricted when it lies
// outside them.
func Write(out io.Writer, o Options, reach config.Reach, acls protect.Host) error {
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
	if err := protect.Check(targets, acls, protect.Adopting); err != nil {
		return err
	}
	if goos := o.Host.GOOS; goos == config.Windows {
		abs, err := absOutput(o.Host, o.Output)
		if err != nil {
			return err
		}
		if _, err := protect.Create(goos, targets, ospath.Dir(goos, abs), acls); err != nil {
			return err
		}
		if _, err := protect.Enforce(targets, acls, protect.Adopting); err != nil {
			return err
		}
	}
	if err := writeSecret(o, data, acls); err != nil {
		return err
	}
	// Only what differs now: the file, when no restricted directory
	// holds it.
	if _, err := protect.Enforce(targets, acls, protect.Starting); err != nil {
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
	if host.GOOS != config.Windows {
		return nil, nil
	}
	abs, err := absOutput(host, output)
	if err != nil {
		return nil, err
	}
	return protect.Targets(c, config.NewLayout(host), "", protect.ConfigFiles(abs, "")...)
}

// absOutput is --output as an absolute path.
func absOutput(host config.Host, output string) (string, error) {
	if ospath.IsAbs(host.GOOS, output) {
		return output, nil
	}
	// Relative to where config runs, which is this host.
	abs, err := filepath.Abs(output)
	if err != nil {
		return "", fmt.Errorf("--output %s: %w", output, err)
	}
	return abs, nil
}

// writeSecret writes the configuration, which holds the join token: on
// Windows into a file created with its own administrators-only descriptor
// (an --output outside the node's folders would otherwise hold the token
// under its folder's ACL until it is restricted), elsewhere with mode
// 0600.
func writeSecret(o Options, data []byte, acls protect.Host) error {
	if o.Host.GOOS != config.Windows {
		return config.WriteNewFile(o.Output, data, 0o600, o.Overwrite)
	}
	if acls.CreateFile == nil {
		return fmt.Errorf("writing %s: no way to create a file with its security descriptor was given", o.Output)
	}
	return config.WriteNewSecret(o.Output, data, o.Overwrite, acls.CreateFile)
}
