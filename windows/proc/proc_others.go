//go:build !windows

package proc

import (
	"fmt"

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
