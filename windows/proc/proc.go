// Package proc lists the running processes, the one way edgecore does: the
// environment check at start-up, preflight's kubelet row and the service's
// "was I started by the service manager" test all read the same list.
// Windows takes a Toolhelp snapshot (proc_windows.go); other systems, where
// only the tests run, read /proc through gopsutil (proc_others.go).
package proc

import "strings"

// Process is a running process as the process list shows it.
type Process struct {
	PID       int
	ParentPID int
	// Name is the program's file name: "kubelet.exe" on Windows, "kubelet"
	// elsewhere. It is empty when the system would not give it (System
	// Idle Process, or a process that exited while the list was read).
	Name string
}

// Find returns the process with the given PID from list.
func Find(list []Process, pid int) (Process, bool) {
	for _, p := range list {
		if p.PID == pid {
			return p, true
		}
	}
	return Process{}, false
}

// Parent returns the parent of the process pid from list. It is false when
// pid is not in the list or its parent has exited: Windows does not
// reparent orphans, so a parent PID may name no process at all.
func Parent(list []Process, pid int) (Process, bool) {
	child, ok := Find(list, pid)
	if !ok {
		return Process{}, false
	}
	// PID 0 is the System Idle Process on Windows, which "parents" System
	// and itself; on Linux 0 is the kernel's own, not a listed process.
	if child.ParentPID == child.PID {
		return Process{}, false
	}
	return Find(list, child.ParentPID)
}

// Identity is who a process runs as and what program it runs, for
// judging a process found by its id (a pipe's server, a program called
// kubelet) and for naming it in messages.
type Identity struct {
	PID int
	// Account is the process's user: its token's SID on Windows, the
	// real user id elsewhere. Empty when it could not be read
	// (AccountErr).
	Account    string
	AccountErr string
	// AccountName is Account as an operator knows it (NT
	// AUTHORITY\SYSTEM, CONTOSO\alice, root); empty when unknown.
	AccountName string
	// Image is the full path of the program the process runs; empty when
	// it could not be read (ImageErr).
	Image    string
	ImageErr string
}

// Who is the account for messages: its name, or its id, or why neither
// is known.
func (i Identity) Who() string {
	switch {
	case i.AccountName != "" && i.Account != "" && i.AccountName != i.Account:
		return i.AccountName + " (" + i.Account + ")"
	case i.Account != "":
		return i.Account
	case i.AccountErr != "":
		return "an account that could not be read: " + i.AccountErr
	}
	return "an unknown account"
}

// SameObjectName reports whether nt, a kernel object's name as the
// system reports it (\BaseNamedObjects\x for Global\x,
// \Sessions\1\BaseNamedObjects\x for Local\x in session 1), is the object
// a program calls name. Names compare without regard to case, as Windows
// compares them.
func SameObjectName(nt, name string) bool {
	const base = `\BaseNamedObjects\`
	if rest, ok := cutPrefixFold(name, `Global\`); ok {
		return strings.EqualFold(nt, base+rest)
	}
	rest, _ := cutPrefixFold(name, `Local\`)
	return len(nt) >= len(base+rest) && strings.EqualFold(nt[len(nt)-len(base+rest):], base+rest)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
