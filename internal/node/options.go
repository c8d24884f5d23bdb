// Package node runs a KubeEdge edge node: it loads the configuration,
// prepares the host, registers the upstream edge modules and runs them on
// the bus under one context until that context ends. The context is the
// node's only stop path: Ctrl+C in a console, the service manager's Stop or
// Shutdown as a Windows service.
package node

import (
	"github.com/kubeedge-windows/edgecore/internal/logfile"
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
}

// Validate checks the options for goos and names the flag to fix.
func (o Options) Validate(goos string) error {
	return o.Logs.Validate(goos)
}
