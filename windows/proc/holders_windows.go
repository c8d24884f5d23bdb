//go:build windows

package proc

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	ntdll                    = windows.NewLazySystemDLL("ntdll.dll")
	procQuerySystemInfo      = ntdll.NewProc("NtQuerySystemInformation")
	procQueryObject          = ntdll.NewProc("NtQueryObject")
	errInfoLengthMismatch    = windows.NTStatus(0xC0000004)
	systemExtendedHandleInfo = 64
	objectNameInformation    = 1
)

// handleEntry is SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX.
type handleEntry struct {
	Object                uintptr
	UniqueProcessID       uintptr
	HandleValue           uintptr
	GrantedAccess         uint32
	CreatorBackTraceIndex uint16
	ObjectTypeIndex       uint16
	HandleAttributes      uint32
	Reserved              uint32
}

// EventHolders lists the processes, other than this one, that hold a
// handle to the named event name (Global\x or Local\x): who created an
// event this process meant to create. Windows does not say who created
// an object, and the squatter's DACL may keep this process from opening
// it, so each event handle in the system's handle table is duplicated
// from its process (which the object's DACL does not govern) and its name
// compared. It needs the right to duplicate the other processes'
// handles, which SYSTEM and elevated administrators have.
func EventHolders(name string) ([]int, error) {
	// The type index of events, from an event of this process.
	own, err := windows.CreateEvent(nil, 0, 0, nil)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(own)
	table, err := handleTable()
	if err != nil {
		return nil, err
	}
	self := uintptr(os.Getpid())
	typ := -1
	for _, e := range table {
		if e.UniqueProcessID == self && e.HandleValue == uintptr(own) {
			typ = int(e.ObjectTypeIndex)
			break
		}
	}
	if typ < 0 {
		return nil, errors.New("this process's own event is missing from the system's handle table")
	}
	procs := map[uintptr]windows.Handle{}
	defer func() {
		for _, h := range procs {
			if h != 0 {
				windows.CloseHandle(h)
			}
		}
	}()
	seen := map[int]bool{}
	var out []int
	var errs []error
	for _, e := range table {
		pid := e.UniqueProcessID
		if int(e.ObjectTypeIndex) != typ || pid == self || seen[int(pid)] {
			continue
		}
		ph, ok := procs[pid]
		if !ok {
			ph, err = windows.OpenProcess(windows.PROCESS_DUP_HANDLE, false, uint32(pid))
			if err != nil {
				errs = append(errs, fmt.Errorf("process %d: %w", pid, err))
				ph = 0
			}
			procs[pid] = ph
		}
		if ph == 0 {
			continue
		}
		var dup windows.Handle
		if err := windows.DuplicateHandle(ph, windows.Handle(e.HandleValue), windows.CurrentProcess(), &dup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
			continue
		}
		n, err := objectName(dup)
		windows.CloseHandle(dup)
		if err == nil && SameObjectName(n, name) {
			seen[int(pid)] = true
			out = append(out, int(pid))
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("no process could be found holding %s; some could not be looked into: %w", name, errors.Join(errs...))
	}
	return out, nil
}

// handleTable reads the system's handle table.
func handleTable() ([]handleEntry, error) {
	size := 1 << 20
	for tries := 0; tries < 8; tries++ {
		buf := make([]byte, size)
		var ret uint32
		r, _, _ := procQuerySystemInfo.Call(uintptr(systemExtendedHandleInfo), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&ret)))
		st := windows.NTStatus(r)
		if st == errInfoLengthMismatch {
			size *= 2
			if int(ret) > size {
				size = int(ret) + 1<<16
			}
			continue
		}
		if st != 0 {
			return nil, fmt.Errorf("reading the system's handle table: %w", st)
		}
		count := *(*uintptr)(unsafe.Pointer(&buf[0]))
		header := 2 * unsafe.Sizeof(uintptr(0))
		if uintptr(len(buf)) < header+count*unsafe.Sizeof(handleEntry{}) {
			return nil, errors.New("reading the system's handle table: the answer is shorter than it says")
		}
		entries := unsafe.Slice((*handleEntry)(unsafe.Pointer(&buf[header])), count)
		return append([]handleEntry(nil), entries...), nil
	}
	return nil, errors.New("reading the system's handle table: it kept growing")
}

// objectName is the kernel name of the object h refers to
// (\BaseNamedObjects\x, \Sessions\1\BaseNamedObjects\x).
func objectName(h windows.Handle) (string, error) {
	buf := make([]byte, 4096)
	var ret uint32
	r, _, _ := procQueryObject.Call(uintptr(h), uintptr(objectNameInformation), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&ret)))
	if st := windows.NTStatus(r); st != 0 {
		return "", st
	}
	us := (*windows.NTUnicodeString)(unsafe.Pointer(&buf[0]))
	if us.Buffer == nil || us.Length == 0 {
		return "", nil
	}
	return windows.UTF16ToString(unsafe.Slice(us.Buffer, us.Length/2)), nil
}
