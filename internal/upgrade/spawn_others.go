//go:build !windows

package upgrade

import "syscall"

// detached starts a process in a session of its own, so that it outlives
// the terminal and the service manager's stop of its parent.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
