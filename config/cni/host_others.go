//go:build !windows

package cni

import (
	"errors"
	"runtime"
)

// HostResolvers is only meaningful on Windows, where the nat plugin runs;
// elsewhere the caller must pass --dns.
func HostResolvers() ([]string, error) {
	return nil, errors.New("reading the host's DNS servers is not supported on " + runtime.GOOS + ": pass " + FlagDNS)
}
