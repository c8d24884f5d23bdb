package envcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// fakeHost answers from maps and records what it was asked.
type fakeHost struct {
	services map[int]string
	ids      map[int]proc.Identity
	// sddl are the programs' (and folders') owners and DACLs.
	sddl  map[string]string
	asked []string
}

func (f *fakeHost) host() Host {
	acls := protect.Host{
		Read: func(p string) (acl.Security, error) {
			s, ok := f.sddl[p]
			if !ok {
				return acl.Security{}, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
			}
			return acl.ParseSDDL(s)
		},
		Exists: func(p string) (bool, error) { _, ok := f.sddl[p]; return ok, nil },
	}
	return Host{
		Services: func() (map[int]string, error) { f.asked = append(f.asked, "services"); return f.services, nil },
		Identify: func(pid int) (proc.Identity, error) {
			f.asked = append(f.asked, fmt.Sprintf("identify %d", pid))
			id, ok := f.ids[pid]
			if !ok {
				return proc.Identity{}, errors.New("Access is denied.")
			}
			return id, nil
		},
		Changeable: func(p string) (string, error) { return Changeable(p, acls) },
	}
}

const (
	adminFolder = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"
	adminFile   = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;0x1200a9;;;BU)"
	bob         = "S-1-5-21-1004336348-1177238915-682003330-1002"
	bobsFile    = "O:" + bob + "D:AI(A;ID;FA;;;" + bob + ")(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
	bobsProfile = "O:SYD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;" + bob + ")"
)

var windowsHost = fakeHost{
	services: map[int]string{640: "kubelet", 700: "containerd"},
	ids: map[int]proc.Identity{
		900:  {Image: `C:\k\kubelet.exe`},
		1300: {Image: `C:\Users\bob\Downloads\kubelet.exe`},
		1400: {Image: `C:\Users\bob\Downloads\kube-proxy.exe`},
		1600: {Image: `C:\tools\kubelet.exe`},
	},
	sddl: map[string]string{
		`C:\k`: adminFolder, `C:\k\kubelet.exe`: adminFile,
		`C:\Users`:     "O:SYD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)",
		`C:\Users\bob`: bobsProfile, `C:\Users\bob\Downloads`: bobsProfile,
		`C:\Users\bob\Downloads\kubelet.exe`: bobsFile, `C:\Users\bob\Downloads\kube-proxy.exe`: bobsFile,
		// An administrator's copy in a folder every user may modify, as
		// C:\'s ACL gives it on client editions: anyone may have
		// replaced it.
		`C:\tools`: "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;ID;0x1301bf;;;AU)", `C:\tools\kubelet.exe`: adminFile,
	},
}

// On Windows a process named like a kubelet counts when it is a service's
// process, runs a program only administrators may change, or cannot be
// looked into; a user's program of that name does not stop the node.
func TestJudgeWindows(t *testing.T) {
	procs := []proc.Process{
		{PID: 4, Name: "System"}, {PID: 78}, // unnamed: skipped
		{PID: 640, Name: "kubelet.exe"},     // the kubelet service
		{PID: 900, Name: "KUBELET.EXE"},     // kubeadm's, run by nssm
		{PID: 1300, Name: "kubelet.exe"},    // bob's, from Downloads
		{PID: 1400, Name: "kube-proxy.exe"}, // bob's too
		{PID: 1500, Name: "kubelet.exe"},    // cannot be opened
		{PID: 1600, Name: "kubelet.exe"},    // in a folder users may change
		{PID: 700, Name: "containerd.exe"},  // not a conflict
		{PID: 800, Name: "kubelet-helper.exe"},
	}
	h := windowsHost
	found, ignored := Judge("windows", procs, h.host())
	want := []string{
		"kubelet.exe (PID 640, the process of the service kubelet)",
		`KUBELET.EXE (PID 900, runs C:\k\kubelet.exe, which only administrators may change)`,
		"kubelet.exe (PID 1500, its program could not be read (Access is denied.))",
	}
	if fmt.Sprint(found) != fmt.Sprint(want) {
		t.Errorf("found\n %v\nwant\n %v", found, want)
	}
	wantIgnored := []string{
		`kubelet.exe (PID 1300, runs C:\Users\bob\Downloads\kubelet.exe, which is owned by ` + bob + `: a program anyone may have put there, not an installed kubelet)`,
		`kube-proxy.exe (PID 1400, runs C:\Users\bob\Downloads\kube-proxy.exe, which is owned by ` + bob + `: a program anyone may have put there, not an installed kubelet)`,
		`kubelet.exe (PID 1600, runs C:\tools\kubelet.exe, which lies in C:\tools, which others may rename or empty: Authenticated Users has 0x1301bf: a program anyone may have put there, not an installed kubelet)`,
	}
	if fmt.Sprint(ignored) != fmt.Sprint(wantIgnored) {
		t.Errorf("ignored\n %v\nwant\n %v", ignored, wantIgnored)
	}
	if n := strings.Count(fmt.Sprint(h.asked), "services"); n != 1 {
		t.Errorf("the services were listed %d times, want once: %v", n, h.asked)
	}
}

// A user's program called kubelet.exe no longer keeps the service from
// starting; an installed one still does, named with why.
func TestCheckProcesses(t *testing.T) {
	h := windowsHost
	if err := CheckProcesses("windows", []proc.Process{{PID: 1300, Name: "kubelet.exe"}}, h.host()); err != nil {
		t.Errorf("a user's kubelet.exe stops the node: %v", err)
	}
	err := CheckProcesses("windows", []proc.Process{{PID: 1300, Name: "kubelet.exe"}, {PID: 640, Name: "kubelet.exe"}}, h.host())
	want := "kubelet.exe (PID 640) is running on this host (the process of the service kubelet) and would fight edgecore, which embeds its own kubelet: " +
		"stop and disable it first, or pass --skip-environment-check if you are sure"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestJudgeLinux(t *testing.T) {
	h := fakeHost{ids: map[int]proc.Identity{1200: {Account: "0"}, 1300: {Account: "1000"}}}
	found, ignored := Judge("linux", []proc.Process{
		{PID: 1200, Name: "kubelet"}, {PID: 1300, Name: "kube-proxy"}, {PID: 1400, Name: "kubelet"}, {PID: 1500, Name: "Kubelet"},
	}, h.host())
	if got := fmt.Sprint(found); got != "[kubelet (PID 1200, running as root) kubelet (PID 1400, its account could not be read (Access is denied.))]" {
		t.Errorf("found %s", got)
	}
	if got := fmt.Sprint(ignored); got != "[kube-proxy (PID 1300, running as user 1000, who cannot manage the node's containers)]" {
		t.Errorf("ignored %s", got)
	}
	for _, a := range h.asked {
		if a == "services" {
			t.Error("the services were listed on Linux")
		}
	}
}

// The check edgecore runs at start-up, fed from the one process lister
// and this host: a program called kubelet running as root on this host
// must stop it.
func TestCheckProcessesSeesARunningKubelet(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("starts a Unix program named kubelet")
	}
	if os.Geteuid() != 0 {
		t.Skip("a kubelet counts when it runs as root: run as root")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program to copy:", err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	kubelet := filepath.Join(t.TempDir(), "kubelet")
	if err := os.WriteFile(kubelet, data, 0o755); err != nil {
		t.Fatal(err)
	}
	h := Host{Identify: proc.Identify}
	list, err := proc.List()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckProcesses(runtime.GOOS, list, h); err != nil {
		t.Skip("this host already runs one:", err)
	}
	cmd := exec.Command(kubelet, "30")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot run a program from the temporary directory:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	want := fmt.Sprintf("kubelet (PID %d) is running on this host (running as root)", cmd.Process.Pid)
	deadline := time.Now().Add(5 * time.Second)
	for {
		list, err := proc.List()
		if err != nil {
			t.Fatal(err)
		}
		err = CheckProcesses(runtime.GOOS, list, h)
		if err != nil && strings.HasPrefix(err.Error(), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("with %s running: %v, want an error starting %q", kubelet, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
