// Package pipe serves and dials Windows named pipes, and tells who serves
// one. It is a thin adapter over go-winio: on other systems Listen and
// Dial fail, so that code choosing a pipe by configuration reports the
// mistake instead of crashing, and ServerOf reads a Unix socket's peer.
package pipe

import (
	"fmt"
	"strings"
)

// Path is the Windows path of the local pipe called name: \\.\pipe\name.
func Path(name string) string { return `\\.\pipe\` + name }

// Server is what the system says of the process at the other end of one
// connection the node dialled: on Windows a named pipe's server, on Linux
// a Unix socket's peer.
type Server struct {
	// PID is the serving process (GetNamedPipeServerProcessId on
	// Windows, SO_PEERCRED elsewhere); 0 when the system did not say.
	PID int
	// SDDL is the pipe object's owner and DACL, as GetSecurityInfo
	// reads them through the connected handle ("" off Windows, or when
	// they could not be read: SDDLErr says why).
	SDDL    string
	SDDLErr string
	// UID is the peer's user (SO_PEERCRED); -1 on Windows, where an
	// account is a SID the process's token holds.
	UID int
}

// SquattedError is a pipe name another process holds already: creating
// it anyway would either fail, or, where the system lets a second
// process add instances (Wine), share the name with a server of someone
// else's choosing, which would answer some of the node's clients.
type SquattedError struct {
	Pipe string
	// PID is the process serving it, 0 when no instance could be
	// reached (all busy, or its DACL keeps this process out): Why says
	// which.
	PID int
	Why string
}

func (e *SquattedError) Error() string {
	who := "another process"
	if e.PID != 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the pipe %s is already served by %s", e.Pipe, who)
	if e.PID == 0 && e.Why != "" {
		fmt.Fprintf(&b, " (its process id could not be read: %s)", e.Why)
	}
	b.WriteString(", so it was not created: whoever made it first chooses its access list and would answer clients meant for edgecore")
	if e.PID != 0 {
		fmt.Fprintf(&b, "; fix: find what runs as process %d (Get-Process -Id %d | Format-List Path,UserName in an elevated PowerShell), stop it, and start edgecore again", e.PID, e.PID)
	} else {
		b.WriteString("; fix: find the program holding the pipe (Get-ChildItem \\\\.\\pipe\\ lists the names; Sysinternals' handle.exe -a names the process), stop it, and start edgecore again")
	}
	return b.String()
}
