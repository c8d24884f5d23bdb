// Package servertrust decides whether the process that serves a pipe or
// socket the node dials is the one the node means to talk to, and refuses
// any other, naming the pipe, the serving process, its program and
// account, with the fix.
//
// Why: any local account may create a named pipe whose name is free, and
// a Unix socket where it may write. The node talks to its container
// runtime as SYSTEM (root on Linux): the kubelet hands it every pod's
// Secret environment values and registry credentials, and acts on the
// log paths it answers with (renaming and deleting them as SYSTEM). A CRI
// server a user started before join, or while containerd restarts during
// an upgrade, would receive all of that. So every connection is judged by
// who serves it, as the system reports it for that very connection (the
// pipe's server process id, a socket's peer credentials), never by what
// the server says of itself.
//
// The rules (Judge), by what the connection must reach:
//
//   - Runtime, on Windows: the process of the registered containerd
//     service, running as SYSTEM; or a server whose pipe only SYSTEM and
//     Administrators may open and that they own, which no other account
//     can create, nor add an instance to. containerd's own pipe has
//     go-winio's default DACL (Everyone may read), so containerd is
//     trusted as the service; a runtime of the operator's own is trusted
//     as the service, or by serving an administrators-only pipe.
//   - Runtime, on Linux: a peer running as root or as the node's own user.
//   - Self (the node's own kubelet server pipe or socket): this process.
//
// The facts come through Host (the system's calls, or a recording fake),
// so that every decision is tested on any build host.
package servertrust

import (
	"fmt"
	"strings"

	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// Want is whom a connection must reach.
type Want int

const (
	// Runtime is the container runtime: its CRI endpoint and
	// containerd's API on the same pipe.
	Runtime Want = iota
	// Self is one of the node's own pipes or sockets, which this
	// process serves (the kubelet server's).
	Self
)

// RuntimeService is the service whose process is trusted to serve the
// runtime's pipe on Windows: containerd's, as `containerd.exe
// --register-service` and join register it.
const RuntimeService = "containerd"

// AdminOnlyPipeSDDL is a descriptor a runtime of the operator's own may
// serve its pipe with to be trusted: owned by Administrators, open to
// SYSTEM and Administrators only.
const AdminOnlyPipeSDDL = "O:BA" + acl.PipeSDDL

// Facts are what the host says of one connection's server.
type Facts struct {
	// GOOS is the target OS: the rules differ.
	GOOS string
	// Address is the pipe or socket dialled, as an operator writes it
	// (\\.\pipe\containerd-containerd, /run/containerd/containerd.sock).
	Address string
	// Server is the connection's server as the system reports it;
	// ServerErr says why it could not be read.
	Server    pipe.Server
	ServerErr string
	// Process is the serving process's account and program;
	// ProcessErr says why it could not be read.
	Process    proc.Identity
	ProcessErr string
	// ServicePID is RuntimeService's process (Windows, Runtime only): 0
	// when it is not running, or not installed (ServiceState says
	// which), or unknown (ServiceErr).
	ServicePID   int
	ServiceState string
	ServiceErr   string
	// SelfPID and SelfUID are this process's id and user.
	SelfPID int
	SelfUID int
}

// RefusedError is a connection whose server the node does not trust.
type RefusedError struct {
	Facts Facts
	// What the endpoint is, for the message ("the container runtime's
	// pipe").
	What string
	Why  string
	Fix  string
}

// Temporary is false: gRPC clients that fail on a dial error that is not
// temporary (containerd's) stop at the refusal rather than retrying
// until their time-out. Those that retry anyway (the kubelet's) reconnect
// once a trusted server answers.
func (e *RefusedError) Temporary() bool { return false }

func (e *RefusedError) Error() string { return e.Problem() + "; fix: " + e.Fix }

// Problem is the refusal without its fix, for callers that print the fix
// on a line of its own (a plan's step error).
func (e *RefusedError) Problem() string {
	return fmt.Sprintf("%s %s is served by %s, which edgecore does not trust: %s",
		e.What, e.Facts.Address, e.Facts.who(), e.Why)
}

// WithoutFix is e as an error whose message is Problem; errors.As still
// finds e through it.
func (e *RefusedError) WithoutFix() error { return problemError{e} }

type problemError struct{ r *RefusedError }

func (p problemError) Error() string { return p.r.Problem() }
func (p problemError) Unwrap() error { return p.r }

// who names the serving process with its program and account.
func (f Facts) who() string {
	if f.Server.PID == 0 {
		return "a process that could not be identified (" + f.ServerErr + ")"
	}
	s := fmt.Sprintf("process %d", f.Server.PID)
	var parts []string
	if f.Process.Image != "" {
		parts = append(parts, f.Process.Image)
	}
	switch {
	case f.Process.Account != "":
		parts = append(parts, "running as "+f.Process.Who())
	case f.GOOS != "windows" && f.Server.UID >= 0:
		parts = append(parts, fmt.Sprintf("running as user %d", f.Server.UID))
	case f.ProcessErr != "":
		parts = append(parts, "whose account could not be read: "+f.ProcessErr)
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// Judge returns nil when the server f describes may serve what want
// names, else a *RefusedError saying why and what to do.
func Judge(want Want, f Facts) error {
	if want == Self {
		return judgeSelf(f)
	}
	what := "the container runtime's pipe"
	if f.GOOS != "windows" {
		what = "the container runtime's socket"
	}
	refuse := func(why, fix string) error { return &RefusedError{Facts: f, What: what, Why: why, Fix: fix} }
	if f.ServerErr != "" || f.Server.PID == 0 {
		why := "its server cannot be identified"
		if f.ServerErr != "" {
			why += ": " + f.ServerErr
		}
		if f.GOOS == "windows" {
			return refuse(why, "use containerd's named pipe (npipe://./pipe/containerd-containerd), whose server the node can identify, served by the containerd service")
		}
		return refuse(why, "use containerd's Unix socket (unix:///run/containerd/containerd.sock), whose server the node can identify")
	}
	stop := fmt.Sprintf("stop process %d", f.Server.PID)
	if f.GOOS != "windows" {
		if f.Server.UID == 0 || f.Server.UID == f.SelfUID {
			return nil
		}
		return refuse(fmt.Sprintf("it runs as user %d, neither root nor the node's own user (%d), and would receive every pod's secrets and registry credentials", f.Server.UID, f.SelfUID),
			stop+" (kill "+fmt.Sprint(f.Server.PID)+") and start containerd (systemctl start containerd), then try again")
	}
	if f.ServicePID != 0 && f.Server.PID == f.ServicePID && acl.SameSID(f.Process.Account, acl.SystemSID) {
		return nil
	}
	pipeWhy, pipeOK := adminOnlyPipe(f.Server)
	if pipeOK {
		return nil
	}
	var service string
	switch {
	case f.ServiceErr != "":
		service = fmt.Sprintf("the %s service could not be queried (%s)", RuntimeService, f.ServiceErr)
	case f.ServicePID == 0:
		service = fmt.Sprintf("the %s service is %s", RuntimeService, orDefault(f.ServiceState, "not running"))
	case f.Server.PID != f.ServicePID:
		service = fmt.Sprintf("the %s service runs as process %d", RuntimeService, f.ServicePID)
	case f.Process.Account == "":
		service = fmt.Sprintf("it is the %s service's process, but its account could not be read (%s): run from an elevated prompt", RuntimeService, orDefault(f.Process.AccountErr, f.ProcessErr))
	default:
		service = fmt.Sprintf("it is the %s service's process, but runs as %s, not SYSTEM", RuntimeService, f.Process.Who())
	}
	return refuse(fmt.Sprintf("it is not the %s service's process running as SYSTEM (%s), and %s; "+
		"it would receive every pod's secrets and registry credentials", RuntimeService, service, pipeWhy),
		fmt.Sprintf("%s (Stop-Process -Id %d in an elevated PowerShell) and start containerd (Start-Service %s), then try again; "+
			"a runtime of your own must run as the %s service under LocalSystem, or serve its pipe with a descriptor that admits SYSTEM and Administrators only, such as %s",
			stop, f.Server.PID, RuntimeService, RuntimeService, AdminOnlyPipeSDDL))
}

// adminOnlyPipe reports whether the pipe's owner is SYSTEM or
// Administrators and its DACL admits no one else (so no one else created
// it, or may add an instance to it), and says why not.
func adminOnlyPipe(s pipe.Server) (string, bool) {
	if s.SDDL == "" {
		return "its pipe's owner and DACL could not be read (" + orDefault(s.SDDLErr, "no descriptor") + ")", false
	}
	sec, err := acl.ParseSDDL(s.SDDL)
	if err != nil {
		return fmt.Sprintf("its pipe's descriptor %s could not be read (%v)", s.SDDL, err), false
	}
	if !acl.SameSID(sec.Owner, "SY") && !acl.SameSID(sec.Owner, "BA") {
		return fmt.Sprintf("its pipe is owned by %s, not SYSTEM or Administrators (%s)", acl.TrusteeName(orDefault(sec.Owner, "nobody")), s.SDDL), false
	}
	if others := sec.Others(); len(others) > 0 {
		var g []string
		for _, o := range others {
			g = append(g, o.String())
		}
		return fmt.Sprintf("its pipe admits others: %s (%s)", strings.Join(g, ", "), s.SDDL), false
	}
	return "", true
}

func judgeSelf(f Facts) error {
	if f.ServerErr == "" && f.Server.PID != 0 && f.Server.PID == f.SelfPID {
		return nil
	}
	why := fmt.Sprintf("it is not this edgecore (process %d), which serves it", f.SelfPID)
	if f.ServerErr != "" {
		why = "its server cannot be identified: " + f.ServerErr
	}
	return &RefusedError{Facts: f, What: "edgecore's own kubelet server endpoint", Why: why,
		Fix: "stop the other process and restart edgecore, which then serves it itself"}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
