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

// Identify reads the account and program of the process pid through a
// handle with limited query rights, which SYSTEM and elevated
// administrators get for every process but protected ones. A process
// that is gone, or cannot be opened, is an error; what cannot be read of
// one that was opened is said in the Identity.
func Identify(pid int) (Identity, error) {
	id := Identity{PID: pid}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return id, fmt.Errorf("opening process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		id.ImageErr = err.Error()
	} else {
		id.Image = windows.UTF16ToString(buf[:n])
	}
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		id.AccountErr = err.Error()
		return id, nil
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		id.AccountErr = err.Error()
		return id, nil
	}
	id.Account = u.User.Sid.String()
	if name, domain, _, err := u.User.Sid.LookupAccount(""); err == nil {
		id.AccountName = name
		if domain != "" {
			id.AccountName = domain + `\` + name
		}
	}
	return id, nil
}
