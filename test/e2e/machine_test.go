//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// memory is the peak and the current resident set of a process, and the
// part of the latter mapped from files, in MiB.
func memory(pid int) (hwm, rss, file float64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmHWM:":
			hwm = kb / 1024
		case "VmRSS:":
			rss = kb / 1024
		case "RssFile:":
			file = kb / 1024
		}
	}
	return hwm, rss, file
}

// machine names the day and the machine a measurement's table was made
// on, as each table's heading line gives them: "2006-01-02, host (CPU
// model, N CPUs)".
func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %s (%s, %d CPUs)", time.Now().Format("2006-01-02"), host, cpuModel(), runtime.NumCPU())
}

// cpuModel is the processor's name as /proc/cpuinfo gives it.
func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
