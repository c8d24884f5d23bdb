//go:build windows

package service

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Processes are the running Win32 services' processes: each service's
// name by its process id (a shared svchost.exe is named by one of its
// services). Listing them needs only the right to enumerate services,
// which every account has.
func Processes() (map[int]string, error) {
	scm, err := windows.OpenSCManager(nil, nil, windows.SC_MANAGER_ENUMERATE_SERVICE)
	if err != nil {
		return nil, fmt.Errorf("listing the running services: %w", err)
	}
	defer windows.CloseServiceHandle(scm)
	out := map[int]string{}
	var resume uint32
	buf := make([]byte, 64*1024)
	for {
		var needed, count uint32
		err := windows.EnumServicesStatusEx(scm, windows.SC_ENUM_PROCESS_INFO, windows.SERVICE_WIN32, windows.SERVICE_ACTIVE,
			&buf[0], uint32(len(buf)), &needed, &count, &resume, nil)
		if err != nil && err != windows.ERROR_MORE_DATA {
			return nil, fmt.Errorf("listing the running services: %w", err)
		}
		entries := unsafe.Slice((*windows.ENUM_SERVICE_STATUS_PROCESS)(unsafe.Pointer(&buf[0])), count)
		for _, e := range entries {
			if pid := int(e.ServiceStatusProcess.ProcessId); pid != 0 {
				if _, ok := out[pid]; !ok {
					out[pid] = windows.UTF16PtrToString(e.ServiceName)
				}
			}
		}
		if err == nil {
			return out, nil
		}
		if count == 0 && int(needed) > len(buf) {
			buf = make([]byte, needed)
		}
	}
}
