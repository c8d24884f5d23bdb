//go:build !windows

package proc

import (
	"fmt"
	"os/user"
	"strconv"

	ps "github.com/shirou/gopsutil/v3/process"
)

// List reads the process table through gopsutil, which also recovers names
// longer than the 15 characters Linux keeps in /proc/<pid>/stat. A process
// that exits while the list is read keeps its PID with an empty Name, as
// on Windows.
func List() ([]Process, error) {
	list, err := ps.Processes()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := make([]Process, 0, len(list))
	for _, p := range list {
		name, err := p.Name()
		if err != nil {
			name = ""
		}
		ppid, err := p.Ppid()
		if err != nil {
			ppid = 0
		}
		out = append(out, Process{PID: int(p.Pid), ParentPID: int(ppid), Name: name})
	}
	return out, nil
}

// Identify reads the real user and the program of the process pid from
// /proc.
func Identify(pid int) (Identity, error) {
	id := Identity{PID: pid}
	p, err := ps.NewProcess(int32(pid))
	if err != nil {
		return id, fmt.Errorf("process %d: %w", pid, err)
	}
	if exe, err := p.Exe(); err != nil {
		id.ImageErr = err.Error()
	} else {
		id.Image = exe
	}
	uids, err := p.Uids()
	if err != nil || len(uids) == 0 {
		id.AccountErr = fmt.Sprint(err)
		return id, nil
	}
	id.Account = strconv.Itoa(int(uids[0]))
	if u, err := user.LookupId(id.Account); err == nil {
		id.AccountName = u.Username
	}
	return id, nil
}

// EventHolders fails: named events are Windows objects.
func EventHolders(name string) ([]int, error) {
	return nil, fmt.Errorf("finding who holds the event %s: named events exist only on Windows", name)
}
