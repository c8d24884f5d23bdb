// Package envcheck refuses to start edgecore next to a standalone kubelet or
// kube-proxy: the kubelet would manage the same containers and fight over the
// node, and kube-proxy would program the host network behind edgecore's back.
// The processes come from windows/proc, the one process lister, at start-up
// and in preflight alike.
package envcheck

import (
	"fmt"
	"strings"

	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// conflicting lists the programs that must not run beside edgecore. Windows
// reports image names with their extension, so "kubelet" alone never matches
// there, which is why upstream's check never fires on Windows.
func conflicting(goos string) []string {
	if goos == "windows" {
		return []string{"kubelet.exe", "kubelet", "kube-proxy.exe", "kube-proxy"}
	}
	return []string{"kubelet", "kube-proxy"}
}

// CheckProcesses returns an error naming the first conflicting process of
// procs, as proc.List gives them.
func CheckProcesses(goos string, procs []proc.Process) error {
	found := Conflicting(goos, procs)
	if len(found) == 0 {
		return nil
	}
	p := found[0]
	return fmt.Errorf("%s (PID %d) is running on this host and would fight edgecore, which embeds its own kubelet: "+
		"stop and disable it first, or pass --skip-environment-check if you are sure", p.Name, p.PID)
}

// Conflicting returns the processes of procs that must not run beside
// edgecore on goos, in list order. Processes without a name (System Idle
// Process, protected services and short-lived processes on Windows) are
// skipped: the check is about named programs.
func Conflicting(goos string, procs []proc.Process) []proc.Process {
	var found []proc.Process
	for _, p := range procs {
		if p.Name != "" && conflicts(goos, p.Name) {
			found = append(found, p)
		}
	}
	return found
}

// conflicts reports whether a process called name must not run beside
// edgecore on goos. Names compare the way the OS compares them: Windows
// file names are case-insensitive.
func conflicts(goos, name string) bool {
	for _, c := range conflicting(goos) {
		if goos == "windows" && strings.EqualFold(name, c) || name == c {
			return true
		}
	}
	return false
}
