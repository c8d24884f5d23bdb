//go:build windows

package proc

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// List reads a Toolhelp snapshot, which names every process and its parent
// without opening it: opening protected processes (csrss.exe, services run
// as SYSTEM when edgecore is not elevated) is what fails with the other
// APIs.
func List() ([]Process, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot the process list: %w", err)
	}
	defer windows.CloseHandle(snap)
	var out []Process
	e := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		out = append(out, Process{
			PID:       int(e.ProcessID),
			ParentPID: int(e.ParentProcessID),
			Name:      windows.UTF16ToString(e.ExeFile[:]),
		})
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return out, fmt.Errorf("walk the process list: %w", err)
	}
	return out, nil
}
