package reset

import (
	"errors"

	"github.com/spf13/pflag"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// flagConfig is the flag an empty configuration path is reported against.
const flagConfig = "--config"

// NewOptions are reset's defaults on d's host: the configuration in
// its default place.
func NewOptions(d *deps.Dependencies) *Options {
	return &Options{ConfigFile: d.Layout.ConfigFile, Host: d.Host, Layout: d.Layout}
}

// AddFlags binds reset's flags to o; the defaults are o's values.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "The node's configuration file; the certificate and database paths are read from it")
	fs.BoolVar(&o.KeepData, "keep-data", o.KeepData, "Keep the database (pods, config maps and secrets the node has cached)")
	fs.BoolVar(&o.Force, "force", o.Force, "Reset without asking for confirmation (needed when standard input is not a terminal)")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Print what reset would remove and change nothing")
	fs.BoolVar(&o.RemoveNetwork, "network", o.RemoveNetwork, "Also remove the HNS network and host endpoint that cni-config created (and only those)")
}

// Complete fills in the host, its log file and, with --network, the
// remover of cni-config's network, which NetworkOf makes for the host's
// layout (reset does not know how cni-config records its network).
func (o *Options) Complete(d *deps.Dependencies) error {
	o.Host, o.Layout = d.Host, d.Layout
	o.LogFile = d.Layout.LogFile
	if o.RemoveNetwork {
		if o.NetworkOf == nil {
			return errors.New("--network: this build cannot remove cni-config's network")
		}
		o.Network = o.NetworkOf(d)
	}
	return nil
}

// Validate checks reset's flags. An empty --config is refused rather than
// read as "no configuration": reset would then remove the default
// locations while the operator meant another node's file.
func (o Options) Validate() error {
	if o.ConfigFile == "" {
		return &config.InvalidError{What: "reset options", Errs: field.ErrorList{field.Required(field.NewPath(flagConfig),
			"give the node's configuration file, or leave the flag out for "+o.Layout.ConfigFile)}}
	}
	return nil
}
