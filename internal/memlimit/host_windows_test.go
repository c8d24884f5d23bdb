package memlimit

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// systemBasicInformation is SYSTEM_BASIC_INFORMATION, which
// NtQuerySystemInformation fills for class 0.
type systemBasicInformation struct {
	reserved                     uint32
	timerResolution              uint32
	pageSize                     uint32
	numberOfPhysicalPages        uint32
	lowestPhysicalPageNumber     uint32
	highestPhysicalPageNumber    uint32
	allocationGranularity        uint32
	minimumUserModeAddress       uintptr
	maximumUserModeAddress       uintptr
	activeProcessorsAffinityMask uintptr
	numberOfProcessors           int8
}

// TestHostMemory checks HostMemory (GlobalMemoryStatusEx) against a second
// reading, the kernel's count of physical pages times the page size, which
// is what GlobalMemoryStatusEx reports as total physical memory on Windows
// and under Wine.
func TestHostMemory(t *testing.T) {
	var info systemBasicInformation
	if err := windows.NtQuerySystemInformation(0, unsafe.Pointer(&info), uint32(unsafe.Sizeof(info)), nil); err != nil {
		t.Fatal(err)
	}
	want := uint64(info.numberOfPhysicalPages) * uint64(info.pageSize)
	if want == 0 {
		t.Fatalf("SYSTEM_BASIC_INFORMATION reports %d pages of %d bytes", info.numberOfPhysicalPages, info.pageSize)
	}
	if got := HostMemory(); got != want {
		t.Errorf("HostMemory() = %d, want %d (%d pages of %d bytes)", got, want, info.numberOfPhysicalPages, info.pageSize)
	}
}
