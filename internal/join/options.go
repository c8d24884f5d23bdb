package join

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/proxyenv"
	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// DefaultTimeout covers issuing the certificates and the first hub
// connection, which take seconds, with room for a slow link.
const DefaultTimeout = 5 * time.Minute

// NewOptions are join's defaults on d's host: the configuration in its
// default place, and a wait of DefaultTimeout.
func NewOptions(d *deps.Dependencies) *Options {
	return &Options{
		ConfigFile: d.Layout.ConfigFile,
		Timeout:    DefaultTimeout,
		Host:       d.Host,
		Layout:     d.Layout,
		Runtime:    runtimeinstall.ChoiceAuto,
		Network:    NetworkOptions(d),
	}
}

// NetworkOptions are cni-config's defaults (podnet.NewOptions) with no
// mode and no plugin: join picks them once it knows the runtime (l2bridge
// with win-bridge for the bundled one).
func NetworkOptions(d *deps.Dependencies) podnet.Options {
	n := *podnet.NewOptions(d)
	n.Mode, n.L2Bridge.Plugin = "", ""
	return n
}

// AddFlags binds join's flags to o: keadm join's, then join's own. The
// defaults are o's values.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.JoinOptions.AddFlags(fs)
	fs.StringArrayVar(&o.Set, "set", o.Set,
		"Set a configuration field by its dotted path, e.g. modules.edged.tailoredKubeletConfig.maxPods=50 (repeat, or separate with commas)")
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Configuration file to write, under "+o.Layout.KubeEdgeDir+"; the service runs with it")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the node certificates and the hub connection")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Print the steps join would take and change nothing")
	fs.StringVar(&o.Runtime, "runtime", o.Runtime, "Container runtime: auto installs the containerd this release bundles when the host has none, "+
		"bundled installs it and refuses a host with a containerd service, host never installs it")
	fs.StringVar(&o.RegistryConfig, "registry-config", o.RegistryConfig,
		"A registries.yaml (RKE2's format: mirrors with endpoint and rewrite, configs with auth and tls) for the bundled containerd: "+
			"mirrors, a private CA, client certificates and credentials, copied into containerd's folder (SYSTEM and Administrators only)")
	o.Proxy.AddFlags(fs)
	// cni-config's own flags for the network, read by its rules.
	o.Network.AddNetworkFlags(fs)
	if f := fs.Lookup("mode"); f != nil {
		f.Usage = "Pod network join writes: l2bridge (routable pod addresses, with the bundled win-bridge; the default with the bundled runtime) " +
			"or nat (needs Microsoft's nat.exe in the CNI bin folder). With the host's runtime, only when given"
	}
}

// Complete fills in what the flags do not say: the settings split at their
// commas, the host joining (d's), with the address it reaches cloudcore
// from as its node IP, this program for the service, and the log file.
func (o *Options) Complete(d *deps.Dependencies) error {
	o.Set = config.SplitSettings(o.Set)
	o.Host, o.Layout = d.Host, d.Layout
	// The address this host reaches the cloud from is the node IP the
	// cloud can reach it back on.
	if ip, err := config.DefaultRouteIP(o.CloudCoreIPPort); err == nil {
		o.Host.NodeIP = ip.String()
	}
	exe, err := d.ExecutablePath()
	if err != nil {
		return fmt.Errorf("finding the path of this program for the service: %w", err)
	}
	o.Executable = exe
	o.LogFile = d.Layout.LogFile
	return nil
}

// Validate checks the flags without touching the host: keadm's flags as
// the generated configuration takes them, --timeout, --config and the
// --set syntax. Problems are reported together, each naming its flag and
// the fix, as a failure of join's first step, the way the plan prints it.
func (o Options) Validate() error {
	if _, _, err := o.generate(); err != nil {
		return validateStepError(err)
	}
	return nil
}

// generate is Validate's checks, returning the configuration keadm's flags
// make (before the --set values) for New to build on.
func (o Options) generate() (*v1alpha2.EdgeCoreConfig, []config.Rewrite, error) {
	goos := o.Host.GOOS
	var errs field.ErrorList
	flag := func(name string) *field.Path { return field.NewPath(name) }
	if o.Timeout <= 0 {
		errs = append(errs, field.Invalid(flag(flagTimeout), o.Timeout.String(), "give how long to wait for the certificates and the hub connection, for example 5m"))
	}
	kubeedge := o.Layout.KubeEdgeDir
	switch {
	case o.ConfigFile == "":
		errs = append(errs, field.Required(flag(flagConfig), "give the configuration file to write, for example "+o.Layout.ConfigFile))
	case !ospath.IsAbs(goos, o.ConfigFile):
		errs = append(errs, field.Invalid(flag(flagConfig), o.ConfigFile, "give an absolute path: the service does not start in this directory"))
	case !ospath.Within(goos, kubeedge, o.ConfigFile) || ospath.Same(goos, kubeedge, o.ConfigFile):
		errs = append(errs, field.Invalid(flag(flagConfig), o.ConfigFile,
			"keep the configuration under "+kubeedge+", which join restricts to SYSTEM and Administrators: it holds the join token until the certificates are issued"))
	}
	if o.Runtime != "" {
		if err := runtimeinstall.ValidChoice(o.Runtime); err != nil {
			errs = append(errs, field.NotSupported(flag(runtimeinstall.FlagRuntime), o.Runtime,
				[]string{runtimeinstall.ChoiceAuto, runtimeinstall.ChoiceBundled, runtimeinstall.ChoiceHost}))
		}
	}
	switch strings.ToLower(strings.TrimSpace(o.Network.Mode)) {
	case "", cni.ModeNAT, cni.ModeL2Bridge:
	default:
		errs = append(errs, field.NotSupported(flag(cni.FlagMode), o.Network.Mode, []string{cni.ModeL2Bridge, cni.ModeNAT}))
	}
	if err := proxyenv.Validate(o.Proxy.URL, o.Proxy.NoProxy); err != nil {
		errs = append(errs, field.Invalid(flag(proxyenv.FlagProxy), redact.URL(o.Proxy.URL), err.Error()))
	}
	for _, err := range proxyenv.ValidateRanges(o.Proxy.URL,
		proxyenv.Range{Flag: cni.FlagClusterCIDR, Value: o.Network.L2Bridge.ClusterCIDR, What: "the cluster's pod range"},
		proxyenv.Range{Flag: cni.FlagServiceCIDR, Value: o.Network.L2Bridge.ServiceCIDR, What: "the cluster's service range"}) {
		errs = append(errs, field.Invalid(flag(proxyenv.FlagProxy), redact.URL(o.Proxy.URL), err.Error()))
	}
	_, setErrs := config.ParseSettings(o.Set)
	errs = append(errs, setErrs...)

	// keadm's flags are judged by the configuration they make: a runtime
	// endpoint, say, is wrong only as the generated configuration has it.
	c, rewrites, err := config.JoinConfig(o.JoinOptions, o.Host, nil)
	var invalid *config.InvalidError
	switch {
	case errors.As(err, &invalid):
		errs = append(invalid.Errs, errs...)
	case err != nil:
		return nil, nil, err
	}
	if len(errs) > 0 {
		return nil, nil, &config.InvalidError{What: "join options", Errs: errs}
	}
	return c, rewrites, nil
}

// validateStepError reports err as the failure of join's first step.
func validateStepError(err error) error {
	return &steps.StepError{Verb: "join", Index: 1, Total: numJoinSteps, Step: stepValidate, Err: err}
}
