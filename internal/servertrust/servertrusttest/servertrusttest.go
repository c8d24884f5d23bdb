// Package servertrusttest helps Windows tests that run a real runtime
// under Wine, where the node's rule cannot be met: every process there
// runs as one user, never SYSTEM, and a containerd the service manager
// starts never runs. It is for tests only.
package servertrusttest

import (
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// AsService is this host's facts (servertrust.OSHost), with the test
// standing in for the service manager: process pid is the containerd
// service's process, running as SYSTEM, as the service manager would
// start it on Windows. Who serves a connection is still the system's
// answer (GetNamedPipeServerProcessId), which must be pid.
func AsService(pid int) servertrust.Host {
	h := servertrust.OSHost()
	h.Service = func(string) (int, string, error) { return pid, "running", nil }
	h.Identify = func(p int) (proc.Identity, error) {
		id, err := proc.Identify(p)
		if p == pid {
			id.Account, id.AccountName = acl.SystemSID, `NT AUTHORITY\SYSTEM`
		}
		return id, err
	}
	return h
}
