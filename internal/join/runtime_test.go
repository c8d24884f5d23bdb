package join_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

func TestJoinDryRunShowsTheRuntimeAndChangesNothing(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	before := w.FS.Paths()
	o := hosttest.WithL2Bridge(w.Options())
	o.DryRun = true
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatal(err)
	}
	hosttest.MustContain(t, "dry run", out.String(), "Container runtime: no container runtime on this host",
		"Pod network: l2bridge with the win-bridge plugin",
		`write the pod network: create or reuse the HNS network "edgecore-l2bridge" (L2Bridge, 10.244.2.0/24, gateway 10.244.2.1) on adapter "Ethernet"`,
		"write "+hosttest.CNIL2Bridge+" (l2bridge network, plugin win-bridge, subnet 10.244.2.0/24); record it in "+hosttest.CNINetRecord,
		"install the container runtime: no container runtime on this host: the release's is installed: copy containerd v2.1.4, ctr and the runhcs shim v0.13.0",
		"register the container runtime's service: install the service \"containerd\" (automatic start",
		"write the pod network: create", `start the container runtime: start the service "containerd" and wait`)
	if !regexp.MustCompile(`(?s)register the container runtime's service.*write the pod network.*start the container runtime`).MatchString(out.String()) {
		t.Errorf("the dry run does not register containerd's service, write the network, and start containerd in that order:\n%s", out.String())
	}
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 || len(w.HNS.Calls) != 0 {
		t.Errorf("the dry run changed the host: %v %v %v", after, w.Services.Calls, w.HNS.Calls)
	}
}

func TestJoinKeepsTheHostsRuntime(t *testing.T) {
	for name, tc := range map[string]struct {
		setup  func(*hosttest.World)
		choice string
		want   string
	}{
		"a containerd service": {
			setup: func(w *hosttest.World) { w.Services.Configs["containerd"] = service.Config{Name: "containerd"} },
			want:  `the host's containerd service is used; it is not replaced (--runtime auto)`,
		},
		"a runtime answering without a service": {
			setup: func(w *hosttest.World) { w.CRIUp = true },
			want:  "a container runtime already answers at npipe://./pipe/containerd-containerd and is used",
		},
		"--runtime host": {
			setup: func(*hosttest.World) {}, choice: runtimeinstall.ChoiceHost,
			want: "the host's runtime is used (--runtime host)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.WithBundle()
			tc.setup(w)
			o := w.Options()
			o.DryRun, o.Runtime = true, tc.choice
			var out bytes.Buffer
			if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
				t.Fatal(err)
			}
			hosttest.MustContain(t, "dry run", out.String(), "Container runtime: "+tc.want)
			if strings.Contains(out.String(), "install the container runtime") {
				t.Errorf("the plan installs a runtime:\n%s", out.String())
			}
		})
	}
}

func TestJoinBundledRefusesAHostWithContainerd(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	o := w.Options()
	o.Runtime = runtimeinstall.ChoiceBundled
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), "already has a containerd service", "fix: keep it with --runtime auto")
}

func TestJoinRuntimeFilesInTheWayAreRefusedBeforeAnyChange(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.FS.AddFile(hosttest.CtrdExe, "someone else's")
	before := w.FS.Paths()
	err := join.Run(context.Background(), &bytes.Buffer{}, w.Options(), w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), `files of another containerd installation are in the way: C:\Program Files\containerd\bin\containerd.exe`, "fix: move them away")
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("the host changed: %v", after)
	}
}

// A later failure takes the installed runtime back too: the host is as
// join found it.
func TestJoinFailureRemovesTheInstalledRuntime(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	before := w.FS.Paths()
	// edgecore's start fails; containerd's succeeded before it.
	sys := w.System()
	sys.Services = failStart{w.Services, "edgecore"}
	sys.Runtime.Services = sys.Services
	err := join.Run(context.Background(), &bytes.Buffer{}, hosttest.WithL2Bridge(w.Options()), sys)
	if err == nil {
		t.Fatal("join succeeded")
	}
	hosttest.MustContain(t, "error", err.Error(), "rolled back: install and start the service, write the pod network, register the container runtime's service, install the container runtime")
	if len(w.HNS.Networks) != 0 || len(w.HNS.Endpoints) != 0 {
		t.Errorf("HNS objects left: %v %v", w.HNS.Networks, w.HNS.Endpoints)
	}
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("after rollback the host has\n%v\nwant\n%v", after, before)
	}
	if len(w.Services.Configs) != 0 {
		t.Errorf("services left: %v", w.Services.Configs)
	}
}

// failStart fails the start of one service.
type failStart struct {
	*hosttest.Services
	name string
}

func (f failStart) Start(name string) error {
	if name == f.name {
		return errors.New(`start service "` + name + `": it stopped while starting (exit code 1)`)
	}
	return f.Services.Start(name)
}

// The node's pause image reaches a runtime only where join pins it in the
// bundled containerd's config.toml (config.LinuxOnlySandboxImage's
// comment): upstream's Linux-only default is refused there, before any
// change, and left to the operator's containerd otherwise.
func TestJoinPinsNoLinuxOnlyPauseImage(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	before := w.FS.Paths()
	o := w.Options()
	o.Set = []string{"modules.edged.podSandboxImage=kubeedge/pause:3.6"}
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error()+" "+steps.Fix(err), "modules.edged.podSandboxImage kubeedge/pause:3.6 has no Windows variant", "config.toml", "registry.k8s.io/pause:3.9")
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("the host changed: %v", after)
	}

	w = hosttest.NewWorld(t)
	w.WithBundle()
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	o = w.Options()
	o.DryRun, o.Set = true, []string{"modules.edged.podSandboxImage=kubeedge/pause:3.6"}
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("with the host's containerd, whose config.toml picks the sandbox image, join refused keadm's pause image: %v", err)
	}
}
