package memlimit

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHostMemory checks HostMemory against a second reading: MemTotal of
// /proc/meminfo (HostMemory asks sysinfo(2)), lowered to the cgroup's
// limit when there is one.
func TestHostMemory(t *testing.T) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			want = kb * 1024
		}
	}
	if want == 0 {
		t.Fatal("/proc/meminfo has no MemTotal in kB")
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n < want {
				t.Logf("%s limits the cgroup to %d bytes", f, n)
				want = n
			}
			break
		}
	}
	if got := HostMemory(); got != want {
		t.Errorf("HostMemory() = %d, want %d (MemTotal, or the cgroup limit when lower)", got, want)
	}
}
