package config

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const header = "apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\n"

// Every trap of running edgecore on Windows, as the operator would write it
// in the config file, and what loading it must do: rewrite the value (and
// say so) or refuse it with the field, the value and the fix.
func TestWindowsTraps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		goos     string
		yaml     string
		rewrites map[string]string // field -> value after loading
		errs     []string          // substrings the error must contain
	}{
		{name: "forward slashes", goos: Windows,
			yaml:     "database:\n  dataSource: C:/var/lib/kubeedge/edgecore.db\n",
			rewrites: map[string]string{"database.dataSource": `C:\var\lib\kubeedge\edgecore.db`}},
		{name: "doubled backslashes and lower-case drive", goos: Windows,
			yaml:     "database:\n  dataSource: c:\\\\var\\\\lib\\\\kubeedge\\\\edgecore.db\n",
			rewrites: map[string]string{"database.dataSource": `C:\var\lib\kubeedge\edgecore.db`}},
		{name: "drive-less POSIX path", goos: Windows,
			yaml:     "modules:\n  edged:\n    rootDirectory: /var/lib/kubelet\n",
			rewrites: map[string]string{"modules.edged.rootDirectory": `C:\var\lib\kubelet`}},
		{name: "mixed separators", goos: Windows,
			yaml:     "modules:\n  edgeHub:\n    tlsCaFile: 'C:\\etc/kubeedge\\\\ca//rootCA.crt'\n",
			rewrites: map[string]string{"modules.edgeHub.tlsCaFile": `C:\etc\kubeedge\ca\rootCA.crt`}},
		{name: "Win32 pipe path as CRI endpoint", goos: Windows,
			yaml: "modules:\n  edged:\n    tailoredKubeletConfig:\n      containerRuntimeEndpoint: '\\\\.\\pipe\\containerd-containerd'\n" +
				"      imageServiceEndpoint: //./pipe/containerd-containerd\n",
			rewrites: map[string]string{
				"modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint": "npipe://./pipe/containerd-containerd",
				"modules.edged.tailoredKubeletConfig.imageServiceEndpoint":     "npipe://./pipe/containerd-containerd",
			}},
		{name: "Linux cgroup driver dropped", goos: Windows,
			yaml:     "modules:\n  edged:\n    tailoredKubeletConfig:\n      cgroupDriver: systemd\n",
			rewrites: map[string]string{"modules.edged.tailoredKubeletConfig.cgroupDriver": ""}},
		{name: "unix socket endpoint", goos: Windows,
			yaml: "modules:\n  edged:\n    tailoredKubeletConfig:\n      containerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n",
			errs: []string{"containerRuntimeEndpoint", "unix:///run/containerd/containerd.sock", "npipe://./pipe/containerd-containerd"}},
		{name: "unknown priority class", goos: Windows,
			yaml: "modules:\n  edged:\n    windowsPriorityClass: FOO\n",
			errs: append([]string{"modules.edged.windowsPriorityClass", `"FOO"`}, WindowsPriorityClasses...)},
		{name: "empty priority class", goos: Windows,
			yaml: "modules:\n  edged:\n    windowsPriorityClass: \"\"\n",
			errs: []string{"modules.edged.windowsPriorityClass", "NORMAL_PRIORITY_CLASS"}},
		{name: "cgroups per QoS", goos: Windows,
			yaml: "modules:\n  edged:\n    tailoredKubeletConfig:\n      cgroupsPerQOS: true\n",
			errs: []string{"cgroupsPerQOS", "set cgroupsPerQOS: false"}},
		{name: "CFS quota", goos: Windows,
			yaml: "modules:\n  edged:\n    tailoredKubeletConfig:\n      cpuCFSQuota: true\n",
			errs: []string{"cpuCFSQuota", "set cpuCFSQuota: false"}},
		{name: "node allocatable enforcement", goos: Windows,
			yaml: "modules:\n  edged:\n    tailoredKubeletConfig:\n      enforceNodeAllocatable: [pods]\n",
			errs: []string{"enforceNodeAllocatable", "pods", "enforceNodeAllocatable: []"}},
		{name: "resolv.conf", goos: Windows,
			yaml: "modules:\n  edged:\n    tailoredKubeletConfig:\n      resolvConf: /etc/resolv.conf\n",
			errs: []string{"resolvConf", "/etc/resolv.conf", `resolvConf: ""`}},
		{name: "kubelet installing itself as a service", goos: Windows,
			yaml: "modules:\n  edged:\n    windowsService: true\n",
			errs: []string{"windowsService", "edgecore.exe service install"}},
		{name: "relative path", goos: Windows,
			yaml: "modules:\n  edgeHub:\n    tlsCertFile: certs/server.crt\n",
			errs: []string{"modules.edgeHub.tlsCertFile", `certs\server.crt`, `C:\etc\kubeedge\certs\server.crt`}},
		{name: "drive-relative path", goos: Windows,
			yaml: "database:\n  dataSource: 'C:edgecore.db'\n",
			errs: []string{"database.dataSource", "C:edgecore.db", "absolute path"}},
		{name: "drive-relative path without a default", goos: Windows,
			yaml: "modules:\n  edged:\n    experimentalMounterPath: 'c:bin/mount.exe'\n",
			errs: []string{"modules.edged.experimentalMounterPath", `Invalid value: "C:bin\\mount.exe"`, `such as C:\etc\kubeedge\bin\mount.exe`}},
		{name: "upper-case node name", goos: Windows,
			yaml: "modules:\n  edged:\n    hostnameOverride: WIN_SRV_01\n",
			errs: []string{"hostnameOverride", "WIN_SRV_01", "win-srv-01"}},
		{name: "null section", goos: Windows,
			yaml: "modules:\n  edgeHub: null\n",
			errs: []string{"modules.edgeHub", "remove the line"}},
		{name: "wrong kind", goos: Windows,
			yaml: "modules:\n  edgeHub:\n    heartbeat: fast\n",
			errs: []string{"modules.edgeHub.heartbeat (line 5)", `"fast" is not a whole number`}},
		{name: "unparseable YAML", goos: Windows,
			yaml: "modules:\n  edgeHub: [\n",
			errs: []string{"yaml", "line"}},
		{name: "POSIX paths stay on Linux", goos: Linux,
			yaml:     "database:\n  dataSource: /var/lib/kubeedge//edgecore.db\nmodules:\n  edged:\n    rootDirectory: /var/lib/kubelet\n",
			rewrites: map[string]string{}},
		{name: "unix socket is fine on Linux", goos: Linux,
			yaml:     "modules:\n  edged:\n    tailoredKubeletConfig:\n      containerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n",
			rewrites: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "edgecore.yaml", []byte(header+tc.yaml))
			c, rewrites, err := Load(p, testHost(tc.goos))
			if len(tc.errs) > 0 {
				if err == nil {
					t.Fatal("accepted")
				}
				for _, want := range tc.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error does not mention %q:\n%v", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rewrites {
				got[r.Field] = r.To
				if r.From == r.To {
					t.Errorf("rewrite of %s changed nothing", r.Field)
				}
			}
			if !reflect.DeepEqual(got, tc.rewrites) {
				t.Errorf("rewrites %v, want %v", got, tc.rewrites)
			}
			for f, want := range tc.rewrites {
				if v := valueOf(c, f); v != want {
					t.Errorf("%s = %q after loading, want %q", f, v, want)
				}
			}
		})
	}
}

func valueOf(c *v1alpha2.EdgeCoreConfig, name string) string {
	for _, f := range stringFields(c) {
		if f.name == name {
			return *f.ptr
		}
	}
	if name == "modules.edged.tailoredKubeletConfig.cgroupDriver" {
		return c.Modules.Edged.TailoredKubeletConfig.CgroupDriver
	}
	panic("no field " + name)
}

func TestWindowsSamplesMatchGoldenFiles(t *testing.T) {
	for _, kind := range []string{KindMinimal, KindDefault} {
		got, err := Render(kind, testHost(Windows))
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "windows-"+kind+".yaml", got)
	}
}

// checkGolden compares got with testdata/name, rewriting the file first
// when the tests run with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./config -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s; if the change is intended, run go test ./config -update\n%s", golden, got)
	}
}

// Walk every string of the generated Windows configurations: none may be a
// POSIX path, a unix socket or a Linux-only image, and the Windows kubelet
// settings must be the ones that work.
func TestWindowsSamplesAreWindowsThroughout(t *testing.T) {
	for _, kind := range []string{KindMinimal, KindDefault} {
		c, err := Sample(kind, testHost(Windows))
		if err != nil {
			t.Fatal(err)
		}
		walkStrings(reflect.ValueOf(c), kind, func(path, s string) {
			for _, bad := range []string{"/etc/", "/var/", "/usr/", "/run/", "unix://", "kubeedge/pause"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s: %s = %q contains %q", kind, path, s, bad)
				}
			}
			if strings.HasPrefix(s, "/") {
				t.Errorf("%s: %s = %q is a POSIX path", kind, path, s)
			}
		})
		e := c.Modules.Edged
		k := e.TailoredKubeletConfig
		if e.WindowsPriorityClass != "NORMAL_PRIORITY_CLASS" || e.WindowsService ||
			*k.CgroupsPerQOS || *k.CPUCFSQuota || len(k.EnforceNodeAllocatable) != 0 || k.EnforceNodeAllocatable == nil ||
			k.ResolverConfig == nil || *k.ResolverConfig != "" || k.CgroupDriver != "" {
			t.Errorf("%s: Windows kubelet settings wrong: %+v / %+v", kind, e.TailoredKubeletFlag, k)
		}
		if k.ContainerRuntimeEndpoint != "npipe://./pipe/containerd-containerd" || e.PodSandboxImage != WindowsSandboxImage {
			t.Errorf("%s: endpoint %q image %q", kind, k.ContainerRuntimeEndpoint, e.PodSandboxImage)
		}
		// The kubelet's read-only port must not be reachable from the
		// network.
		if k.Address != "127.0.0.1" || k.ReadOnlyPort == 0 {
			t.Errorf("%s: kubelet address %q read-only port %d", kind, k.Address, k.ReadOnlyPort)
		}
		if c.Modules.DeviceTwin.DMISockPath != "npipe://./pipe/kubeedge-dmi" {
			t.Errorf("%s: DMI endpoint %q is not a named pipe", kind, c.Modules.DeviceTwin.DMISockPath)
		}
		if e.HostnameOverride != "line3-pc" || e.NodeIP != "10.20.30.40" {
			t.Errorf("%s: node name %q, IP %q", kind, e.HostnameOverride, e.NodeIP)
		}
	}
}

func walkStrings(v reflect.Value, path string, visit func(path, s string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, visit)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkStrings(v.Field(i), path+"."+v.Type().Field(i).Name, visit)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walkStrings(v.Index(i), path+"[]", visit)
		}
	case reflect.Map:
		for _, key := range v.MapKeys() {
			walkStrings(v.MapIndex(key), path+"["+key.String()+"]", visit)
		}
	case reflect.String:
		visit(path, v.String())
	}
}

func TestNodeName(t *testing.T) {
	for in, want := range map[string]string{
		"LINE3-PC":              "line3-pc",
		"WIN_SRV_01":            "win-srv-01",
		"  Shop Floor  ":        "shop-floor",
		"-EDGE-":                "edge",
		"":                      DefaultNodeName,
		"___":                   DefaultNodeName,
		strings.Repeat("A", 70): strings.Repeat("a", 63),
	} {
		if got := NodeName(in); got != want {
			t.Errorf("NodeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Setting one kubelet switch must not flip another: the defaults decode
// through pointers.
func TestKubeletSwitchesAreIndependent(t *testing.T) {
	p := writeFile(t, "edgecore.yaml", []byte(header+"modules:\n  edged:\n    tailoredKubeletConfig:\n      cgroupsPerQOS: true\n"))
	_, _, err := Load(p, testHost(Windows))
	if err == nil || !strings.Contains(err.Error(), "cgroupsPerQOS") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "cpuCFSQuota") {
		t.Errorf("cpuCFSQuota reported although the file does not set it:\n%v", err)
	}
	if got := strings.Count(err.Error(), "\n  - "); got != 1 {
		t.Errorf("want one problem a line, got %d lines:\n%v", got, err)
	}
}
