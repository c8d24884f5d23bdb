//go:build !windows

package service

import (
	"fmt"
	"time"
)

// The service manager exists only on Windows. These keep the package
// building elsewhere, so that its OS-neutral decisions are tested on any
// host, and give a clear error if a non-Windows build is asked to act.

func notSupported(op Operation, name string) error {
	return fmt.Errorf("%s service %q: %w", op, name, ErrNotSupported)
}

// Install fails with ErrNotSupported outside Windows.
func Install(c Config) ([]string, error) { return nil, notSupported(OpInstall, c.Name) }

// Uninstall fails with ErrNotSupported outside Windows.
func Uninstall(name string, _ time.Duration) error { return notSupported(OpUninstall, name) }

// Start fails with ErrNotSupported outside Windows.
func Start(name string, _ time.Duration) error { return notSupported(OpStart, name) }

// Stop fails with ErrNotSupported outside Windows.
func Stop(name string, _ time.Duration) error { return notSupported(OpStop, name) }

// Query fails with ErrNotSupported outside Windows.
func Query(name string) (Status, error) { return Status{Name: name}, notSupported(OpStatus, name) }

// SetCommandLine fails with ErrNotSupported outside Windows.
func SetCommandLine(name, _ string) error { return notSupported(OpConfigure, name) }

// IsWindowsService is false outside Windows.
func IsWindowsService() (bool, error) { return false, nil }

// RunAsService fails with ErrNotSupported outside Windows, without calling
// run.
func RunAsService(name string, _ func() error, _ func(), _ <-chan struct{}) error {
	return notSupported(OpRun, name)
}

// PreShutdownRequests fails outside Windows, where there is no service
// manager to rehearse.
func PreShutdownRequests(pid uint32) (<-chan struct{}, func(), error) {
	return nil, func() {}, fmt.Errorf("event %s: %w", PreShutdownEventName(pid), ErrNotSupported)
}

// Processes fails with ErrNotSupported outside Windows.
func Processes() (map[int]string, error) { return nil, notSupported(OpStatus, "*") }
