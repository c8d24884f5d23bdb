// Package deps is the process's dependencies in one value, as the kubelet
// has its Dependencies: the host's facts, the node's layout, the host
// probes, the clock, the file system, ACL access, the service manager and
// the path of this program. main builds it once (ForHost); every command and the node take
// it, and tests pass one made of fakes. Nothing else in the process looks
// these up for itself.
package deps

import (
	"errors"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Dependencies are what commands and the node take from the process.
type Dependencies struct {
	// Host is the machine, read once (config.CurrentHost).
	Host config.Host
	// Layout is the node's directories and files on Host.
	Layout config.Layout
	// Probes read the host's facts (hostprobe.Host outside tests).
	Probes hostprobe.Set
	Clock  clock.Clock
	// FS is the file system (hostfs.OS outside tests).
	FS hostfs.FS
	// ACLs read and set the owners and ACLs of the node's files
	// (protect.HostACLs outside tests).
	ACLs protect.Host
	// Services is the service manager.
	Services Services
	// Executable is the path of this program, or "" when ExecutableErr
	// says why it could not be found.
	Executable    string
	ExecutableErr error
}

// ForHost is the running host's dependencies: host as config.CurrentHost
// read it, the real probes, clock, file system, ACLs and service manager,
// and exe and
// exeErr as os.Executable returned them.
func ForHost(host config.Host, exe string, exeErr error) *Dependencies {
	l := config.NewLayout(host)
	acls := protect.HostACLs()
	acls.Record = l.ACLRecord
	return &Dependencies{
		Host:          host,
		Layout:        l,
		Probes:        hostprobe.Host(),
		Clock:         clock.Real{},
		FS:            hostfs.OS{},
		ACLs:          acls,
		Services:      WindowsServices{},
		Executable:    exe,
		ExecutableErr: exeErr,
	}
}

// ExecutablePath is the path of this program, or why it is not known.
func (d *Dependencies) ExecutablePath() (string, error) {
	switch {
	case d.ExecutableErr != nil:
		return "", d.ExecutableErr
	case d.Executable == "":
		return "", errors.New("the system did not name it")
	}
	return d.Executable, nil
}

// Services is the service manager, with the service package's semantics
// and sentinel errors (service.ErrNotInstalled, ...): Start and Stop wait
// until the service runs or has stopped.
type Services interface {
	Query(name string) (service.Status, error)
	Installed(name string) (bool, error)
	Install(c service.Config) (warnings []string, err error)
	// Start starts the service and waits until it runs.
	Start(name string) error
	// Stop stops the service and waits until it has stopped.
	Stop(name string) error
	// Uninstall stops the service, waits until it has stopped, and
	// deletes it.
	Uninstall(name string) error
	// SetCommandLine replaces the service's command line in one write,
	// flushed to disk before it returns (service.SetCommandLine).
	SetCommandLine(name, line string) error
}

// WindowsServices is the host's service manager, with the service
// package's default time limits.
type WindowsServices struct{}

func (WindowsServices) Query(name string) (service.Status, error) { return service.Query(name) }

func (WindowsServices) Installed(name string) (bool, error) {
	st, err := service.Query(name)
	return st.Installed, err
}

func (WindowsServices) Install(c service.Config) ([]string, error) { return service.Install(c) }

func (WindowsServices) Start(name string) error { return service.Start(name, service.StartTimeout) }

func (WindowsServices) Stop(name string) error { return service.Stop(name, service.StopWaitTimeout) }

func (WindowsServices) Uninstall(name string) error {
	return service.Uninstall(name, service.StopWaitTimeout)
}

func (WindowsServices) SetCommandLine(name, line string) error {
	return service.SetCommandLine(name, line)
}
