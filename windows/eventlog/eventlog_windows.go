//go:build windows

package eventlog

import (
	"errors"
	"strings"

	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc/eventlog"
)

// supported are the levels the source is registered for.
const supported = eventlog.Error | eventlog.Warning | eventlog.Info

// Install registers source in the Application log with EventCreate.exe as
// its message file (event ids 1 to 1000). A source registered already is
// kept: `service install` after an uninstall that left it, or a second
// install attempt, registers nothing new.
func Install(source string) error {
	err := eventlog.InstallAsEventCreate(source, supported)
	if err != nil && strings.Contains(err.Error(), "registry key already exists") {
		return nil
	}
	return err
}

// Remove removes source's registration; one that is not registered is not
// an error.
func Remove(source string) error {
	err := eventlog.Remove(source)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	return err
}

// Open opens the Application log for writing as source.
func Open(source string) (Log, error) {
	l, err := eventlog.Open(source)
	if err != nil {
		return nil, err
	}
	return l, nil
}
