//go:build windows

package upgrade

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detached starts a process without the console of its parent (the
// service has none; a console would close with its window) and in a
// process group of its own, so that Ctrl+C in the operator's console does
// not reach it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS,
		HideWindow:    true,
	}
}
