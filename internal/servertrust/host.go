package servertrust

import (
	"context"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Host is where the facts of a connection come from: the system's calls
// (OSHost), or a recording fake in tests.
type Host struct {
	GOOS string
	// Server tells who serves a connection (pipe.ServerOf).
	Server func(c net.Conn) (pipe.Server, error)
	// Identify reads a process's account and program (proc.Identify).
	Identify func(pid int) (proc.Identity, error)
	// Service reads a service's process id (0 when it does not run) and
	// its state in words ("not installed", "Stopped").
	Service func(name string) (pid int, state string, err error)
	// SelfPID and SelfUID are this process's id and effective user.
	SelfPID, SelfUID int
}

// OSHost is this system.
func OSHost() Host {
	return Host{
		GOOS:     runtime.GOOS,
		Server:   pipe.ServerOf,
		Identify: proc.Identify,
		Service:  serviceProcess,
		SelfPID:  os.Getpid(),
		SelfUID:  os.Geteuid(),
	}
}

func serviceProcess(name string) (int, string, error) {
	st, err := service.Query(name)
	switch {
	case err != nil:
		return 0, "", err
	case !st.Installed:
		return 0, "not installed", nil
	}
	return int(st.ProcessID), st.State.String(), nil
}

// Facts gathers what the system says of the server of c, which was
// dialled at address.
func (h Host) Facts(want Want, address string, c net.Conn) Facts {
	f := Facts{GOOS: h.GOOS, Address: address, SelfPID: h.SelfPID, SelfUID: h.SelfUID}
	s, err := h.Server(c)
	if err != nil {
		f.ServerErr = err.Error()
		return f
	}
	f.Server = s
	if s.PID == 0 || want == Self && s.PID == h.SelfPID {
		return f
	}
	if id, err := h.Identify(s.PID); err != nil {
		f.ProcessErr = err.Error()
	} else {
		f.Process = id
	}
	if want == Runtime && h.GOOS == "windows" {
		pid, state, err := h.Service(RuntimeService)
		if err != nil {
			f.ServiceErr = err.Error()
		}
		f.ServicePID, f.ServiceState = pid, strings.ToLower(state)
	}
	return f
}

// Check judges the server of c, dialled at address.
func (h Host) Check(want Want, address string, c net.Conn) error {
	return Judge(want, h.Facts(want, address, c))
}

// Dialer wraps dial: each connection it makes is checked, and one whose
// server is refused is closed and the refusal returned instead.
func (h Host) Dialer(want Want, address string, dial func(context.Context) (net.Conn, error)) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		c, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		if err := h.Check(want, address, c); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// DisplayAddress is a pipe address as an operator writes it: the
// kubelet's CRI client keeps npipe addresses as //./pipe/NAME.
func DisplayAddress(protocol, addr string) string {
	if protocol == "npipe" {
		return strings.ReplaceAll(addr, "/", `\`)
	}
	return addr
}
