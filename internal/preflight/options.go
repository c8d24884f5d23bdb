package preflight

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
)

// Options are the inputs of `edgecore preflight`.
type Options struct {
	// ConfigFile is the configuration whose settings are checked; without
	// one the host is checked against the defaults, as before a join.
	ConfigFile string
	// Offline leaves out the question to the image registry: air-gapped
	// sites have none, and the row then says the image was not checked.
	Offline bool
	Host    config.Host
	// Layout is the node's directories on Host.
	Layout config.Layout
	// ReleaseDir is the folder of the running edgecore.exe, where a
	// release keeps its bundled runtime; "" when not known.
	ReleaseDir string
}

// NewOptions are preflight's defaults on d's host: the configuration in
// its default place.
func NewOptions(d *deps.Dependencies) *Options {
	return &Options{ConfigFile: d.Layout.ConfigFile, Host: d.Host, Layout: d.Layout}
}

// AddFlags binds preflight's flags to o; the defaults are o's values.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Configuration whose settings are checked")
	fs.BoolVar(&o.Offline, "offline", o.Offline, "Do not ask the image registry whether the sandbox image has a Windows variant")
}

// Complete takes the host, its layout and the release's folder from d.
func (o *Options) Complete(d *deps.Dependencies) error {
	o.Host, o.Layout = d.Host, d.Layout
	if exe, err := d.ExecutablePath(); err == nil {
		o.ReleaseDir = ospath.Dir(d.Host.GOOS, exe)
	}
	return nil
}

// Validate checks preflight's own flags.
func (o *Options) Validate() error {
	if o.ConfigFile == "" {
		return errors.New("--config is empty: give the configuration to check, or leave the flag out for " + o.Layout.ConfigFile)
	}
	return nil
}

// ErrProblems is the outcome of a run with FAIL rows.
var ErrProblems = errors.New("preflight found problems; fix the FAIL rows above")

// RunChecks checks the host with probes against the settings of
// o.ConfigFile and writes the table to out; it returns ErrProblems, and
// the exit code, when a row failed.
func RunChecks(ctx context.Context, out io.Writer, o Options, probes Probes) (int, error) {
	cfg, note, err := checkedConfig(o.ConfigFile, o.Host)
	if err != nil {
		return 1, err
	}
	if note != "" {
		fmt.Fprintln(out, note)
	}
	if o.Offline {
		probes.ImagePlatforms = nil
		probes.Registry = nil
	}
	if cfg.NotJoined {
		cfg.BundledRuntime = bundledRuntime(o, probes)
	}
	rows := Run(ctx, cfg, probes)
	if err := Render(out, rows); err != nil {
		return 1, err
	}
	if code := ExitCode(rows); code != 0 {
		return code, ErrProblems
	}
	return 0, nil
}

// checkedConfig takes the checked settings from the configuration file.
// Without one the node has not joined yet: the host is checked against the
// defaults, and the cloudcore and certificate rows are skipped, since the
// defaults name no real cloudcore and join checks it itself.
func checkedConfig(path string, host config.Host) (Config, string, error) {
	c, _, err := config.Load(path, host)
	var missing *config.MissingFileError
	switch {
	case errors.As(err, &missing):
		pc, err := BeforeJoin(host)
		if err != nil {
			return Config{}, "", err
		}
		return pc, fmt.Sprintf("No configuration at %s yet: checking this host against the defaults; join checks cloudcore.", path), nil
	case err != nil:
		return Config{}, "", err
	}
	return FromConfig(c, host, path), "", nil
}

// bundledRuntime is the release's runtime folder beside edgecore.exe when
// it holds a bundle (read as join reads it, runtimeinstall.BundleVersions),
// else "".
func bundledRuntime(o Options, p Probes) string {
	if o.ReleaseDir == "" || p.ReadFile == nil {
		return ""
	}
	if runtimeinstall.BundleVersions(runtimeinstall.Host{ReadFile: p.ReadFile}, o.Host.GOOS, o.ReleaseDir) == nil {
		return ""
	}
	return ospath.Join(o.Host.GOOS, o.ReleaseDir, runtimeinstall.BundleDir)
}
