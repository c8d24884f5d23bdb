package join

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Where the release's runtime lies beside exe, and where join puts it.
const (
	bundle        = `C:\Program Files\edgecore\runtime`
	ctrdDir       = `C:\Program Files\containerd`
	ctrdExe       = ctrdDir + `\bin\containerd.exe`
	ctrdConfig    = ctrdDir + `\config.toml`
	cniBridge     = ctrdDir + `\cni\bin\win-bridge.exe`
	installRecord = ctrdDir + `\installed-by-edgecore.json`
)

// withBundle puts the runtime in the release folder, as the zip has it.
func (w *world) withBundle() {
	for _, f := range runtimeinstall.Files {
		w.fs.AddFile(bundle+`\`+f.Sub+`\`+f.Name, "MZ "+f.Name)
	}
	w.fs.AddFile(bundle+`\manifest.json`, `{"containerd": "v2.1.4", "hcsshim": "v0.13.0", "cni-plugins": "v1.10.0"}`)
	w.fs.AddDir(`C:\Program Files`)
}

func TestJoinInstallsTheBundledRuntimeOnAHostWithoutOne(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	w.edgecoreIssues(true)
	var out bytes.Buffer
	if err := Run(context.Background(), &out, withL2Bridge(w.options()), w.system()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	got := out.String()
	mustContain(t, "output", got,
		"Container runtime: no container runtime on this host: the release's is installed.",
		"Pod network: l2bridge with the win-bridge plugin, written by join.",
		"] install the container runtime", "] write the pod network", "] start the container runtime",
		`creating HNS network "edgecore-l2bridge"`, "wrote "+cniL2Bridge,
		`created C:\Program Files\containerd`,
		`wrote C:\Program Files\containerd\config.toml`,
		`installed service "containerd": "C:\Program Files\containerd\bin\containerd.exe" --config "C:\Program Files\containerd\config.toml" --run-service`,
		"containerd v2.1.4 answers at npipe://./pipe/containerd-containerd")
	// containerd runs before edgecore's service is installed, so that
	// the latter depends on it and finds its CRI.
	if want := []string{"install containerd", "start containerd", "install edgecore", "start edgecore"}; !reflect.DeepEqual(w.services.calls, want) {
		t.Errorf("service calls %v, want %v", w.services.calls, want)
	}
	svc := w.services.installed["containerd"]
	if svc.StartType != service.StartAutomatic || len(svc.RestartDelays) == 0 || svc.PreShutdownTimeout == 0 || svc.RuntimeService != "" {
		t.Errorf("containerd's service %+v: want automatic start, recovery actions and a pre-shutdown wait", svc)
	}
	for _, f := range runtimeinstall.Files {
		if !w.fs.Has(ctrdDir+`\bin\`+f.Name) && !w.fs.Has(ctrdDir+`\cni\bin\`+f.Name) {
			t.Errorf("%s was not installed", f.Name)
		}
	}
	mustContain(t, "config.toml", w.fs.Content(ctrdConfig), "version = 3", "sandbox = 'registry.k8s.io/pause:3.9'",
		`bin_dirs = ['C:\Program Files\containerd\cni\bin']`, `conf_dir = 'C:\Program Files\containerd\cni\conf'`)
	// containerd's folder is made open to SYSTEM and Administrators only.
	if w.made[ctrdDir] != acl.DirectorySDDL {
		t.Errorf("containerd's folder was made with %q, want %q", w.made[ctrdDir], acl.DirectorySDDL)
	}
	mustContain(t, "record", w.fs.Content(installRecord), `"service": "containerd"`, `containerd.exe`, `"containerd": "v2.1.4"`)
	// The network between the runtime's files and its start, so that the
	// started containerd finds it; through cni-config's rules, with the
	// bundle's win-bridge.
	if i, k, m := strings.Index(got, "] install the container runtime"), strings.Index(got, "] write the pod network"), strings.Index(got, "] start the container runtime"); !(i < k && k < m) {
		t.Errorf("the pod network is not written between the runtime's files and its start:\n%s", got)
	}
	mustContain(t, "CNI config", w.fs.Content(cniL2Bridge), `"type": "win-bridge"`, "10.244.2.0/24", "10.96.0.10")
	mustContain(t, "network record", w.fs.Content(cniNetRecord), `"writtenBy": "join"`, `"mode": "l2bridge"`, `"created": true`)
	if _, ok := w.hns.networks["edgecore-l2bridge"]; !ok {
		t.Errorf("no HNS network was created: %v", w.hns.calls)
	}

	// reset takes away what join installed, and only that.
	w.fs.AddFile(ctrdDir+`\containerd.log`, "containerd's own log")
	out.Reset()
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	mustContain(t, "reset output", out.String(), "remove the pod network join wrote", "removed "+cniL2Bridge,
		`kept HNS network "edgecore-l2bridge" and its record`, `the HNS network "edgecore-l2bridge" (reset --network removes it), and C:\var\lib\kubelet were left alone`,
		"remove the container runtime join installed", `stopped and removed service "containerd"`,
		`kept C:\Program Files\containerd: it holds files the installation did not write`,
		"and the container runtime join installed is removed")
	if strings.Contains(out.String(), "containerd with its containers and images") {
		t.Errorf("reset says containerd was left alone after removing it:\n%s", out.String())
	}
	if len(w.services.installed) != 0 {
		t.Errorf("services left: %v", w.services.installed)
	}
	for _, p := range []string{ctrdExe, ctrdConfig, cniBridge, installRecord, cniL2Bridge} {
		if w.fs.Has(p) {
			t.Errorf("reset left %s", p)
		}
	}
	// The HNS network stays, and its record for reset --network.
	if rec := w.fs.Content(cniNetRecord); !strings.Contains(rec, "edgecore-l2bridge") || strings.Contains(rec, "writtenBy") {
		t.Errorf("the network's record after reset: %q", rec)
	}
	if !w.fs.Has(ctrdDir + `\containerd.log`) {
		t.Error("reset removed a file join did not write")
	}
}

func TestJoinDryRunShowsTheRuntimeAndChangesNothing(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	before := w.fs.Paths()
	o := withL2Bridge(w.options())
	o.DryRun = true
	var out bytes.Buffer
	if err := Run(context.Background(), &out, o, w.system()); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "dry run", out.String(), "Container runtime: no container runtime on this host",
		"Pod network: l2bridge with the win-bridge plugin",
		`write the pod network: create or reuse the HNS network "edgecore-l2bridge" (L2Bridge, 10.244.2.0/24, gateway 10.244.2.1) on adapter "Ethernet"`,
		"write "+cniL2Bridge+" (l2bridge network, plugin win-bridge, subnet 10.244.2.0/24); record it in "+cniNetRecord,
		"install the container runtime: no container runtime on this host: the release's is installed: copy containerd v2.1.4, ctr and the runhcs shim v0.13.0",
		"register the container runtime's service: install the service \"containerd\" (automatic start",
		"write the pod network: create", `start the container runtime: start the service "containerd" and wait`)
	if !regexp.MustCompile(`(?s)register the container runtime's service.*write the pod network.*start the container runtime`).MatchString(out.String()) {
		t.Errorf("the dry run does not register containerd's service, write the network, and start containerd in that order:\n%s", out.String())
	}
	if after := w.fs.Paths(); !reflect.DeepEqual(before, after) || len(w.services.calls) != 0 || len(w.hns.calls) != 0 {
		t.Errorf("the dry run changed the host: %v %v %v", after, w.services.calls, w.hns.calls)
	}
}

func TestJoinKeepsTheHostsRuntime(t *testing.T) {
	for name, tc := range map[string]struct {
		setup  func(*world)
		choice string
		want   string
	}{
		"a containerd service": {
			setup: func(w *world) { w.services.installed["containerd"] = service.Config{Name: "containerd"} },
			want:  `the host's containerd service is used; it is not replaced (--runtime auto)`,
		},
		"a runtime answering without a service": {
			setup: func(w *world) { w.criUp = true },
			want:  "a container runtime already answers at npipe://./pipe/containerd-containerd and is used",
		},
		"--runtime host": {
			setup: func(*world) {}, choice: runtimeinstall.ChoiceHost,
			want: "the host's runtime is used (--runtime host)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.withBundle()
			tc.setup(w)
			o := w.options()
			o.DryRun, o.Runtime = true, tc.choice
			var out bytes.Buffer
			if err := Run(context.Background(), &out, o, w.system()); err != nil {
				t.Fatal(err)
			}
			mustContain(t, "dry run", out.String(), "Container runtime: "+tc.want)
			if strings.Contains(out.String(), "install the container runtime") {
				t.Errorf("the plan installs a runtime:\n%s", out.String())
			}
		})
	}
}

func TestJoinBundledRefusesAHostWithContainerd(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	w.services.installed["containerd"] = service.Config{Name: "containerd"}
	o := w.options()
	o.Runtime = runtimeinstall.ChoiceBundled
	err := Run(context.Background(), &bytes.Buffer{}, o, w.system())
	stepError(t, err, 1)
	mustContain(t, "error", err.Error(), "already has a containerd service", "fix: keep it with --runtime auto")
}

func TestJoinRuntimeFilesInTheWayAreRefusedBeforeAnyChange(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	w.fs.AddFile(ctrdExe, "someone else's")
	before := w.fs.Paths()
	err := Run(context.Background(), &bytes.Buffer{}, w.options(), w.system())
	stepError(t, err, 1)
	mustContain(t, "error", err.Error(), `files of another containerd installation are in the way: C:\Program Files\containerd\bin\containerd.exe`, "fix: move them away")
	if after := w.fs.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("the host changed: %v", after)
	}
}

// A later failure takes the installed runtime back too: the host is as
// join found it.
func TestJoinFailureRemovesTheInstalledRuntime(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	before := w.fs.Paths()
	// edgecore's start fails; containerd's succeeded before it.
	sys := w.system()
	sys.Services = failStart{w.services, "edgecore"}
	sys.Runtime.Services = sys.Services
	err := Run(context.Background(), &bytes.Buffer{}, withL2Bridge(w.options()), sys)
	if err == nil {
		t.Fatal("join succeeded")
	}
	mustContain(t, "error", err.Error(), "rolled back: install and start the service, write the pod network, register the container runtime's service, install the container runtime")
	if len(w.hns.networks) != 0 || len(w.hns.endpoints) != 0 {
		t.Errorf("HNS objects left: %v %v", w.hns.networks, w.hns.endpoints)
	}
	if after := w.fs.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("after rollback the host has\n%v\nwant\n%v", after, before)
	}
	if len(w.services.installed) != 0 {
		t.Errorf("services left: %v", w.services.installed)
	}
}

// failStart fails the start of one service.
type failStart struct {
	*fakeServices
	name string
}

func (f failStart) Start(name string) error {
	if name == f.name {
		return errors.New(`start service "` + name + `": it stopped while starting (exit code 1)`)
	}
	return f.fakeServices.Start(name)
}

func TestResetLeavesAContainerdJoinDidNotInstall(t *testing.T) {
	w := newWorld(t)
	w.services.installed["containerd"] = service.Config{Name: "containerd"}
	w.fs.AddFile(ctrdExe, "the operator's")
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	if _, ok := w.services.installed["containerd"]; !ok || !w.fs.Has(ctrdExe) {
		t.Errorf("reset removed the operator's containerd:\n%s", out.String())
	}
	mustContain(t, "reset output", out.String(), "containerd with its containers and images, the CNI configuration")
}

func TestResetKeepsContainerdWhenTheRecordNamesOtherPaths(t *testing.T) {
	w := newWorld(t)
	w.services.installed["containerd"] = service.Config{Name: "containerd"}
	w.fs.AddFile(installRecord, `{"service": "containerd", "files": ["C:\\Windows\\System32\\kernel32.dll"], "dirs": []}`)
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	mustContain(t, "output", out.String(), `kept containerd:`, `outside C:\Program Files\containerd`)
	if _, ok := w.services.installed["containerd"]; !ok {
		t.Error("reset removed the containerd service on a forged record")
	}
}
