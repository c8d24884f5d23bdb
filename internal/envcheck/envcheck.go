// Package envcheck refuses to start edgecore next to a standalone kubelet or
// kube-proxy: the kubelet would manage the same containers and fight over the
// node, and kube-proxy would program the host network behind edgecore's back.
// The processes come from windows/proc, the one process lister, at start-up
// and in preflight alike.
//
// A process is judged by what it is, not by its name: any user may run a
// program called kubelet.exe, and the service would then never start. On
// Windows a process named like one counts when it is a running service's
// process, or runs a program only administrators may change (protect's
// rule: owned by SYSTEM, Administrators or TrustedInstaller, changeable by
// no one else, in folders no one else may rename), or when its program
// cannot be read (a process this one may not open is not a user's). On
// Linux it counts when it runs as root. Any other is reported as ignored.
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

// Host is what the check asks of the host about a process named like a
// kubelet or kube-proxy.
type Host struct {
	// Services are the running services' processes: names by process id
	// (service.Processes); nil off Windows.
	Services func() (map[int]string, error)
	// Identify reads a process's program and account (proc.Identify).
	Identify func(pid int) (proc.Identity, error)
	// Changeable says why the program file path may be changed, or
	// replaced, by an account other than SYSTEM, Administrators and
	// TrustedInstaller ("" when none may); Windows only.
	Changeable func(path string) (string, error)
}

// Found is a process named like a kubelet or kube-proxy, judged.
type Found struct {
	proc.Process
	// Why says what it is: why it counts, or why it is ignored.
	Why string
}

func (f Found) String() string { return fmt.Sprintf("%s (PID %d, %s)", f.Name, f.PID, f.Why) }

// Judge splits the processes of procs named like a kubelet or kube-proxy
// into those that must not run beside edgecore on goos and those that are
// ignored (a user's program of that name), each in list order. Processes
// without a name (System Idle Process, protected services and
// short-lived processes on Windows) are skipped: the check is about named
// programs.
func Judge(goos string, procs []proc.Process, h Host) (found, ignored []Found) {
	var services map[int]string
	var servicesErr error
	asked := false
	for _, p := range procs {
		if p.Name == "" || !conflicts(goos, p.Name) {
			continue
		}
		if goos != "windows" {
			id, err := h.Identify(p.PID)
			switch {
			case err != nil:
				found = append(found, Found{p, "its account could not be read (" + err.Error() + ")"})
			case id.Account == "0":
				found = append(found, Found{p, "running as root"})
			default:
				ignored = append(ignored, Found{p, "running as user " + id.Account + ", who cannot manage the node's containers"})
			}
			continue
		}
		if !asked {
			services, servicesErr = h.Services()
			asked = true
		}
		if name := services[p.PID]; name != "" {
			found = append(found, Found{p, "the process of the service " + name})
			continue
		}
		id, err := h.Identify(p.PID)
		if err == nil && id.Image == "" {
			err = fmt.Errorf("%s", id.ImageErr)
		}
		if err != nil {
			why := "its program could not be read (" + err.Error() + ")"
			if servicesErr != nil {
				why += ", nor the running services (" + servicesErr.Error() + ")"
			}
			found = append(found, Found{p, why})
			continue
		}
		why, err := h.Changeable(id.Image)
		switch {
		case err != nil:
			found = append(found, Found{p, "runs " + id.Image + ", which could not be judged (" + err.Error() + ")"})
		case why == "":
			found = append(found, Found{p, "runs " + id.Image + ", which only administrators may change"})
		default:
			ignored = append(ignored, Found{p, "runs " + id.Image + ", which " + why + ": a program anyone may have put there, not an installed kubelet"})
		}
	}
	return found, ignored
}

// CheckProcesses returns an error naming the first process of procs, as
// proc.List gives them, that must not run beside edgecore (Judge).
func CheckProcesses(goos string, procs []proc.Process, h Host) error {
	found, _ := Judge(goos, procs, h)
	if len(found) == 0 {
		return nil
	}
	p := found[0]
	return fmt.Errorf("%s (PID %d) is running on this host (%s) and would fight edgecore, which embeds its own kubelet: "+
		"stop and disable it first, or pass --skip-environment-check if you are sure", p.Name, p.PID, p.Why)
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
