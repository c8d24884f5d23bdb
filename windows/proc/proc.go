// Package proc lists the running processes, the one way edgecore does: the
// environment check at start-up, preflight's kubelet row and the service's
// "was I started by the service manager" test all read the same list.
// Windows takes a Toolhelp snapshot (proc_windows.go); other systems, where
// only the tests run, read /proc through gopsutil (proc_others.go).
package proc

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
