package envcheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/proc"
)

func TestCheckProcesses(t *testing.T) {
	unnamed := proc.Process{PID: 78} // a name Windows would not give
	for _, tc := range []struct {
		goos    string
		procs   []proc.Process
		running string
	}{
		{"windows", []proc.Process{{PID: 4, Name: "System"}, unnamed, {PID: 1200, Name: "kubelet.exe"}}, "kubelet.exe (PID 1200)"},
		{"windows", []proc.Process{{PID: 1200, Name: "KUBELET.EXE"}}, "KUBELET.EXE (PID 1200)"},
		{"windows", []proc.Process{{PID: 812, Name: "containerd.exe"}, unnamed}, ""},
		{"windows", []proc.Process{{PID: 900, Name: "kubelet-helper.exe"}}, ""},
		{"windows", []proc.Process{unnamed, {PID: 1300, Name: "Kube-Proxy.exe"}}, "Kube-Proxy.exe (PID 1300)"},
		{"linux", []proc.Process{{PID: 1300, Name: "kube-proxy"}}, "kube-proxy (PID 1300)"},
		{"linux", []proc.Process{{PID: 1200, Name: "kubelet"}}, "kubelet (PID 1200)"},
		{"linux", []proc.Process{{PID: 1200, Name: "Kubelet"}, unnamed}, ""},
	} {
		err := CheckProcesses(tc.goos, tc.procs)
		if tc.running == "" {
			if err != nil {
				t.Errorf("%s %v: unexpected error %v", tc.goos, tc.procs, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.running+" is running") || !strings.Contains(err.Error(), "--skip-environment-check") {
			t.Errorf("%s: got %v, want an error naming %s and the override", tc.goos, err, tc.running)
		}
	}
}

func TestConflictingKeepsEveryOneInOrder(t *testing.T) {
	got := Conflicting("windows", []proc.Process{
		{PID: 1300, Name: "kube-proxy.exe"}, {PID: 812, Name: "containerd.exe"}, {PID: 1200, Name: "KUBELET.EXE"}, {PID: 77},
	})
	if fmt.Sprint(got) != "[{1300 0 kube-proxy.exe} {1200 0 KUBELET.EXE}]" {
		t.Errorf("conflicting %v", got)
	}
}

// The check edgecore runs at start-up, fed from the one process lister: a
// program called kubelet running on this host must stop it.
func TestCheckProcessesSeesARunningKubelet(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("starts a Unix program named kubelet")
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
	list, err := proc.List()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckProcesses(runtime.GOOS, list); err != nil {
		t.Skip("this host already runs one:", err)
	}
	cmd := exec.Command(kubelet, "30")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot run a program from the temporary directory:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	want := fmt.Sprintf("kubelet (PID %d) is running on this host", cmd.Process.Pid)
	deadline := time.Now().Add(5 * time.Second)
	for {
		list, err := proc.List()
		if err != nil {
			t.Fatal(err)
		}
		err = CheckProcesses(runtime.GOOS, list)
		if err != nil && strings.HasPrefix(err.Error(), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("with %s running: %v, want an error starting %q", kubelet, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
