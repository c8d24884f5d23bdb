// Package node runs a KubeEdge edge node: it loads the configuration,
// prepares the host, registers the upstream edge modules and runs them on
// the bus under one context until that context ends. The context is the
// node's only stop path: Ctrl+C in a console, the service manager's Stop or
// Shutdown as a Windows service.
package node

import (
	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/diskspace"
	"github.com/kubeedge-windows/edgecore/internal/logfile"
	"github.com/kubeedge-windows/edgecore/internal/memlimit"
)

// Options are what running the node takes from the command line.
type Options struct {
	// ConfigFile is the edgecore configuration to run with.
	ConfigFile string
	// SkipEnvironmentCheck starts edgecore even when a standalone kubelet
	// or kube-proxy runs on the host.
	SkipEnvironmentCheck bool
	// Logs are the log file settings.
	Logs logfile.Options
	// LogFileGiven says --log-file was on the command line: in a console
	// the logs then go to the file as well.
	LogFileGiven bool
	// Host is the machine the node runs on, read once by the command
	// (config.CurrentHost): the configuration's defaults and the node's
	// directories come from it.
	Host config.Host
	// MemoryLimit is --memory-limit, the Go runtime's soft memory limit
	// when given (see internal/memlimit for what applies otherwise).
	MemoryLimit memlimit.Setting

	// asService is set by Main when the service manager started the
	// process: a service refuses to start on files it cannot vouch for
	// (prepareFiles).
	asService bool
	// hubStatus is set by Main when the node writes a log file: the
	// file beside it where the hub records its connection for `service
	// status` (reconnect.StatusPath).
	hubStatus string
	// logFile is the log file when the logs go to one (Main), for the
	// folders watched for space; diskAlert is where a folder filling up is
	// said besides the log (diskAlert).
	logFile   string
	diskAlert func(diskspace.Change)
}

// AddFlags binds the node's own flags to o (the log flags are the Logs
// options' own).
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Path to the edgecore configuration file.")
	fs.BoolVar(&o.SkipEnvironmentCheck, "skip-environment-check", o.SkipEnvironmentCheck,
		"Start even if a standalone kubelet or kube-proxy is running on this host.")
	fs.Var(&o.MemoryLimit, memlimit.FlagName, "Soft memory limit of the Go runtime, such as 300Mi, or off. "+
		"Default: GOMEMLIMIT if set, else the kubelet's kubeReserved memory, else 1/16 of the host's memory within 128Mi-1Gi.")
}

// Complete takes the host from d.
func (o *Options) Complete(d *deps.Dependencies) error {
	o.Host = d.Host
	return nil
}

// Validate checks the options for the host's OS and names the flag to
// fix.
func (o Options) Validate() error {
	return o.Logs.Validate(o.Host.GOOS)
}
