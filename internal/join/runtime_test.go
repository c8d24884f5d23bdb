package join_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/acl"
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

// A CRI server a user started on containerd's pipe before join is refused
// whatever --runtime says, naming the pipe, the process and its account,
// before anything changes: with auto it is not "the operator's runtime",
// with bundled it holds the pipe containerd would serve, with host it is
// not the host's runtime.
func TestJoinRefusesACRIServerItDoesNotTrust(t *testing.T) {
	for _, tc := range []struct {
		name, choice string
		bundle       bool
	}{
		{"auto, with the release's runtime", runtimeinstall.ChoiceAuto, true},
		{"auto, without it", runtimeinstall.ChoiceAuto, false},
		{"bundled", runtimeinstall.ChoiceBundled, true},
		{"host", runtimeinstall.ChoiceHost, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			if tc.bundle {
				w.WithBundle()
			}
			w.CRIServer = hosttest.UserCRIServer()
			before := w.FS.Paths()
			o := w.Options()
			o.Runtime = tc.choice
			for _, dry := range []bool{true, false} {
				o.DryRun = dry
				err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
				stepError(t, err, 1)
				hosttest.MustContain(t, "error", err.Error(),
					`the container runtime's pipe \\.\pipe\containerd-containerd is served by process 6120 (C:\Users\alice\fakecri.exe, running as LINE3-PC\alice`,
					"it is not the containerd service's process running as SYSTEM (the containerd service is not installed)",
					"\n  fix: stop process 6120 (Stop-Process -Id 6120 in an elevated PowerShell) and start containerd")
			}
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
				t.Errorf("the host changed: %v %v", after, w.Services.Calls)
			}
		})
	}
}

// Descriptors of containerd's folders as they may be found.
const (
	// A user created it: they own it.
	userMade = "O:S-1-5-21-1004336348-1177238915-682003330-1001D:AI(A;ID;FA;;;S-1-5-21-1004336348-1177238915-682003330-1001)(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
	// An administrator created it in %ProgramData%: it inherits that
	// every user may add files and folders.
	adminMadeInProgramData = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;CIID;0x100116;;;BU)(A;OICIID;0x1200a9;;;BU)"
	// containerd created it, as it restricts its own folders.
	containerdMade = "O:SYD:P(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)"
)

// join creates containerd's root and state, and the folder holding them,
// open to SYSTEM and Administrators only from their first moment, names
// them in config.toml, and records them as its own.
func TestJoinCreatesContainerdsFoldersRestricted(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	for _, d := range []string{hosttest.CtrdData, hosttest.CtrdRoot, hosttest.CtrdState} {
		if w.Made[d] != acl.DirectorySDDL {
			t.Errorf("%s was made with %q, want %q", d, w.Made[d], acl.DirectorySDDL)
		}
	}
	hosttest.MustContain(t, "config.toml", w.FS.Content(hosttest.CtrdConfig),
		`root = 'C:\ProgramData\containerd\root'`, `state = 'C:\ProgramData\containerd\state'`)
	hosttest.MustContain(t, "record", w.FS.Content(hosttest.InstallRecord),
		`"C:\\ProgramData\\containerd"`, `"C:\\ProgramData\\containerd\\root"`, `"C:\\ProgramData\\containerd\\state"`)
	hosttest.MustContain(t, "output", out.String(), `created C:\ProgramData\containerd\root`)
}

// A folder of containerd's that someone else made first, or that others
// may add to, is refused with its path and fix, whatever --runtime says,
// before anything changes, the dry run included; one containerd made is
// used as it is, and not recorded as join's.
func TestJoinJudgesContainerdsExistingFolders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		choice string
		bundle bool
		toml   string // the host's config.toml, "" for none
		sddl   map[string]string
		want   []string // "" for accepted
	}{
		{"a root a user made, before the release's containerd", runtimeinstall.ChoiceAuto, true, "",
			map[string]string{hosttest.CtrdData: containerdMade, hosttest.CtrdRoot: userMade},
			[]string{`C:\ProgramData\containerd\root (containerd's root, with every image layer and snapshot the node runs) is owned by S-1-5-21-1004336348-1177238915-682003330-1001`}},
		{"a data folder every user may add to", runtimeinstall.ChoiceBundled, true, "",
			map[string]string{hosttest.CtrdData: adminMadeInProgramData},
			[]string{`C:\ProgramData\containerd (containerd's data folder, which holds its root and state) is writable by others: BUILTIN\Users may change or delete (0x100116)`,
				`icacls "C:\ProgramData\containerd" /remove:g *S-1-5-32-545`}},
		{"the host's containerd, with a state a user made", runtimeinstall.ChoiceHost, false, "",
			map[string]string{hosttest.CtrdData: containerdMade, hosttest.CtrdState: userMade},
			[]string{`C:\ProgramData\containerd\state (containerd's state, with the running containers' files) is owned by S-1-5-21-1004336348-1177238915-682003330-1001`}},
		{"the host's containerd, whose config.toml puts its root on D:", runtimeinstall.ChoiceAuto, false, "version = 2\nroot = 'D:\\ctr\\root'\n",
			map[string]string{`D:\ctr`: containerdMade, `D:\ctr\root`: userMade},
			[]string{`D:\ctr\root (containerd's root, with every image layer and snapshot the node runs) is owned by`}},
		{"folders containerd made", runtimeinstall.ChoiceAuto, true, "",
			map[string]string{hosttest.CtrdData: containerdMade, hosttest.CtrdRoot: containerdMade, hosttest.CtrdState: containerdMade}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			if tc.bundle {
				w.WithBundle()
			}
			w.FS.AddDir(`C:\ProgramData`)
			w.SDDL = tc.sddl
			for p := range tc.sddl {
				w.FS.AddDir(p)
			}
			if tc.toml != "" {
				w.FS.AddFile(hosttest.CtrdConfig, tc.toml)
			}
			before := w.FS.Paths()
			o := w.Options()
			if tc.bundle {
				o = hosttest.WithL2Bridge(o)
			}
			o.Runtime, o.DryRun = tc.choice, true
			var out bytes.Buffer
			err := join.Run(context.Background(), &out, o, w.System())
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				w.EdgecoreIssues(true)
				o.DryRun = false
				if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
					t.Fatalf("join: %v\n%s", err, out.String())
				}
				rec := w.FS.Content(hosttest.InstallRecord)
				if strings.Contains(rec, `ProgramData`) {
					t.Errorf("the record claims folders join found: %s", rec)
				}
				return
			}
			stepError(t, err, 1)
			hosttest.MustContain(t, "error", err.Error(), tc.want...)
			hosttest.MustContain(t, "error", err.Error(), "will not take them over", "\n  fix: each line says how to fix its folder")
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
				t.Errorf("the host changed: %v %v", after, w.Services.Calls)
			}
		})
	}
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
	hosttest.MustContain(t, "error", err.Error()+" "+steps.Fix(err), "modules.edged.podSandboxImage kubeedge/pause:3.6 has no Windows variant", "config.toml", config.WindowsSandboxImage)
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
