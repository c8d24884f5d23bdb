package memlimit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// HostMemory is the physical memory of the host in bytes, or the memory
// limit of the cgroup edgecore runs in when that is lower; 0 if unknown.
func HostMemory() uint64 {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0
	}
	total := info.Totalram * uint64(info.Unit)
	// cgroup v2, then v1; "max" or an absurd v1 value means no limit.
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 && n < total {
			total = n
		}
		break
	}
	return total
}
