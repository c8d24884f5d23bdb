// Package stackdump is the named event through which an operator asks a
// running edgecore for its goroutine stacks, as containerd and RKE2 do on
// Windows: the process creates Global\stackdump-<pid> and waits on it;
// `edgecore.exe service dump` opens the event by name and signals it.
// Windows has no SIGQUIT, and a service has no console to press Ctrl+Break
// in, so an event is the way to reach a hung process from outside.
package stackdump

import (
	"errors"
	"fmt"
)

// EventName is the event the process with pid waits on. Global\ puts it in
// the namespace every session sees: the service runs in session 0, the
// operator's prompt in another.
func EventName(pid uint32) string {
	return fmt.Sprintf(`Global\stackdump-%d`, pid)
}

// Errors callers can test for with errors.Is.
var (
	// ErrClosed: Wait returns it once the event has been closed.
	ErrClosed = errors.New("stack dump event closed")
	// ErrNoEvent: no process has created the event (it is not edgecore,
	// or an edgecore without stack dumps, or not yet started).
	ErrNoEvent = errors.New("no such stack dump event")
	// ErrAccessDenied: the caller may not signal the event; it is open
	// to SYSTEM and elevated Administrators only.
	ErrAccessDenied = errors.New("access denied")
	// ErrExists: the event exists already, created by someone else; its
	// access control list is not ours, so it is not used.
	ErrExists = errors.New("the event already exists")
)
