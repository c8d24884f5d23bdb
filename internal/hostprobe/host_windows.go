package hostprobe

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/yusufpapurcu/wmi"
	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

func windowsVersion() (WindowsVersion, error) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Microsoft\Windows NT\CurrentVersion`, registry.QUERY_VALUE)
	if err != nil {
		return WindowsVersion{}, fmt.Errorf("open the CurrentVersion registry key: %w", err)
	}
	defer k.Close()
	s, _, err := k.GetStringValue("CurrentBuildNumber")
	if err != nil {
		return WindowsVersion{}, fmt.Errorf("read CurrentBuildNumber: %w", err)
	}
	build, err := strconv.Atoi(s)
	if err != nil {
		return WindowsVersion{}, fmt.Errorf("CurrentBuildNumber %q is not a number", s)
	}
	v := WindowsVersion{Build: build}
	// Both are informational: older builds and Wine lack UBR.
	if ubr, _, err := k.GetIntegerValue("UBR"); err == nil {
		v.UBR = int(ubr)
	}
	v.ProductName, _, _ = k.GetStringValue("ProductName")
	return v, nil
}

// win32OptionalFeature is a row of the WMI class listing the same optional
// features as Get-WindowsOptionalFeature; InstallState 1 means enabled. WMI
// answers without elevation, where the DISM API would not.
type win32OptionalFeature struct {
	Name         string
	InstallState uint32
}

func containersFeature() (bool, error) {
	var dst []win32OptionalFeature
	if err := wmi.Query("SELECT Name, InstallState FROM Win32_OptionalFeature WHERE Name = 'Containers'", &dst); err != nil {
		return false, fmt.Errorf("query Win32_OptionalFeature: %w", err)
	}
	// Windows Server lists Containers whether enabled or not; an empty answer
	// means the query cannot tell (Wine, a stripped-down image).
	if len(dst) == 0 {
		return false, errors.New("the WMI class Win32_OptionalFeature lists no feature named Containers")
	}
	return dst[0].InstallState == 1, nil
}

func elevated() (bool, error) {
	return windows.GetCurrentProcessToken().IsElevated(), nil
}

// diskSpace is the space available to this user and the size of the
// volume of dir.
func diskSpace(dir string) (free, total uint64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return free, total, nil
}
