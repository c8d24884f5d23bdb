// Package envcheck refuses to start edgecore next to a standalone kubelet or
// kube-proxy: the kubelet would manage the same containers and fight over the
// node, and kube-proxy would program the host network behind edgecore's back.
package envcheck

import (
	"fmt"
	"strings"
)

// Process is what the check needs of a running process.
type Process interface {
	Name() (string, error)
}

// conflicting lists the programs that must not run beside edgecore. Windows
// reports image names with their extension, so "kubelet" alone never matches
// there, which is why upstream's check never fires on Windows.
func conflicting(goos string) []string {
	if goos == "windows" {
		return []string{"kubelet.exe", "kubelet", "kube-proxy.exe", "kube-proxy"}
	}
	return []string{"kubelet", "kube-proxy"}
}

// CheckProcesses returns an error naming the first conflicting process.
// Processes whose name cannot be read, or is empty (System Idle Process,
// protected services and short-lived processes on Windows), are skipped: the
// check is about named programs and must not abort start-up over them.
func CheckProcesses(goos string, procs []Process) error {
	for _, p := range procs {
		name, err := p.Name()
		if err != nil || name == "" {
			continue
		}
		if Conflicts(goos, name) {
			return fmt.Errorf("%s is running on this host and would fight edgecore, which embeds its own kubelet: "+
				"stop and disable it first, or pass --skip-environment-check if you are sure", name)
		}
	}
	return nil
}

// Conflicts reports whether a process called name must not run beside
// edgecore on goos. Names compare the way the OS compares them: Windows
// file names are case-insensitive.
func Conflicts(goos, name string) bool {
	for _, c := range conflicting(goos) {
		if goos == "windows" && strings.EqualFold(name, c) || name == c {
			return true
		}
	}
	return false
}
