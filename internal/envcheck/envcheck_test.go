package envcheck

import (
	"errors"
	"strings"
	"testing"
)

type proc struct {
	name string
	err  error
}

func (p proc) Name() (string, error) { return p.name, p.err }

func TestCheckProcesses(t *testing.T) {
	unreadable := proc{err: errors.New("access is denied")}
	for _, tc := range []struct {
		goos    string
		procs   []Process
		running string
	}{
		{"windows", []Process{proc{name: "System"}, proc{}, unreadable, proc{name: "kubelet.exe"}}, "kubelet.exe"},
		{"windows", []Process{proc{name: "KUBELET.EXE"}}, "KUBELET.EXE"},
		{"windows", []Process{proc{name: "containerd.exe"}, proc{}, unreadable}, ""},
		{"windows", []Process{proc{name: "kubelet-helper.exe"}}, ""},
		{"windows", []Process{unreadable, proc{name: "Kube-Proxy.exe"}}, "Kube-Proxy.exe"},
		{"linux", []Process{proc{name: "kube-proxy"}}, "kube-proxy"},
		{"linux", []Process{proc{name: "kubelet"}}, "kubelet"},
		{"linux", []Process{proc{name: "Kubelet"}, unreadable, proc{}}, ""},
	} {
		err := CheckProcesses(tc.goos, tc.procs)
		if tc.running == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tc.goos, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.running+" is running") {
			t.Errorf("%s: got %v, want an error naming %s", tc.goos, err, tc.running)
		}
	}
}
