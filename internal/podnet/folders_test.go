package podnet_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// What the blog posts use: folders any local user may create under C:\.
const (
	guideBin  = `C:\opt\cni\bin`
	guideConf = `C:\etc\cni\net.d`
	guideNAT  = guideConf + `\0-containerd-nat.conf`
	userOwned = "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)(A;;FA;;;SY)"
)

// cniConfig is `edgecore.exe cni-config --subnet 10.244.2.0/24 --dns
// 10.96.0.10 --cni-bin-dir C:\opt\cni\bin -o C:\etc\cni\net.d\...` on
// the fake Windows host w, whose containerd has the config.toml toml.
func cniConfig(t *testing.T, w *hosttest.World, toml string, dryRun bool) (string, error) {
	t.Helper()
	w.FS.AddFile(hosttest.CtrdConfig, toml)
	d := hosttest.Deps(w.Host)
	o := podnet.NewOptions(d)
	o.Facts = w.PodNetHost().Facts
	o.Subnet, o.DNS = "10.244.2.0/24", []string{"10.96.0.10"}
	o.CNIBinDir, o.Output, o.OutputGiven, o.DryRun = guideBin, guideNAT, true, dryRun
	if err := o.Complete(d); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := podnet.Configure(&out, *o, w.PodNetHost().Env)
	return out.String(), err
}

// cni-config creates the CNI folders it points containerd at where they
// are missing, open to SYSTEM and Administrators only from their first
// moment, and records them; a dry run creates nothing.
func TestCNIConfigCreatesMissingCNIFoldersRestricted(t *testing.T) {
	w := hosttest.NewWorld(t)
	if out, err := cniConfig(t, w, "version = 2\n", true); err != nil || len(w.Made) != 0 || w.FS.Has(guideBin) || w.FS.Has(guideConf) {
		t.Fatalf("dry run: %v, made %v\n%s", err, w.Made, out)
	}
	out, err := cniConfig(t, w, "version = 2\n", false)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for d, want := range map[string]string{guideBin: acl.DirectorySDDL, guideConf: acl.DirectorySDDL, `C:\opt`: acl.ParentSDDL, `C:\etc\cni`: acl.ParentSDDL} {
		if w.Made[d] != want {
			t.Errorf("%s was made with %q, want %q", d, w.Made[d], want)
		}
	}
	hosttest.MustContain(t, "output", out, "created "+guideBin+"\n", "created "+guideConf+"\n")
	hosttest.MustContain(t, "config.toml", w.FS.Content(hosttest.CtrdConfig), `bin_dir = "C:\\opt\\cni\\bin"`, `conf_dir = "C:\\etc\\cni\\net.d"`)
	hosttest.MustContain(t, "record", w.FS.Content(hosttest.CNINetRecord), `"dirs": [`, `"C:\\opt\\cni\\bin"`, `"C:\\etc\\cni\\net.d"`)
}

// cni-config judges, before it changes anything (a dry run too), every
// folder containerd will run a plugin from or read a network in: the ones
// it is given, and those containerd 2.1's bin_dirs keeps after them. What
// an administrator put there passes; a planted plugin or network, a link
// or a folder others may add to is refused naming the path and the fix.
func TestCNIConfigRefusesPlantedCNIFolders(t *testing.T) {
	const plugin = guideBin + `\nat.exe`
	for _, c := range []struct {
		name  string
		toml  string
		plant func(w *hosttest.World)
		want  []string // nil: accepted
	}{
		{"plugins an administrator copied", "version = 2\n", func(w *hosttest.World) {}, nil},
		{"a plugin a user planted", "version = 2\n", func(w *hosttest.World) { w.SDDL[plugin] = userOwned },
			[]string{plugin + ` (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1-2-3-1001`}},
		{"a network a user planted", "version = 2\n", func(w *hosttest.World) {
			w.FS.AddFile(guideConf+`\00-first.conflist`, `{"type": "evil"}`)
			w.SDDL[guideConf+`\00-first.conflist`] = userOwned
		}, []string{guideConf + `\00-first.conflist (in C:\etc\cni\net.d, a CNI configuration folder`}},
		{"a plugin that is a link", "version = 2\n", func(w *hosttest.World) { w.FS.AddLink(guideBin + `\win-bridge.exe`) },
			[]string{guideBin + `\win-bridge.exe (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is a symbolic link`}},
		{"a plugin folder users may add to", "version = 2\n", func(w *hosttest.World) {
			w.SDDL[guideBin] = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;CIID;0x4;;;BU)(A;CIID;0x2;;;BU)"
		}, []string{guideBin + ` (a CNI plugin folder, whose every program containerd runs as SYSTEM) is writable by others: BUILTIN\Users`}},
		{"a planted plugin in a folder bin_dirs keeps", "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['D:\\cni']\n", func(w *hosttest.World) {
			w.FS.AddFile(`D:\cni\win-overlay.exe`, "MZ")
			w.SDDL[`D:\cni\win-overlay.exe`] = userOwned
		}, []string{`D:\cni\win-overlay.exe (in D:\cni, a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1-2-3-1001`}},
	} {
		for _, dry := range []bool{true, false} {
			w := hosttest.NewWorld(t)
			w.SDDL = map[string]string{}
			w.FS.AddFile(plugin, "MZ nat")
			w.FS.AddDir(`C:\etc`)
			c.plant(w)
			w.FS.AddFile(hosttest.CtrdConfig, c.toml)
			before := w.FS.Paths()
			out, err := cniConfig(t, w, c.toml, dry)
			if c.want == nil {
				if err != nil {
					t.Errorf("%s, dry run %v: refused: %v\n%s", c.name, dry, err, out)
				}
				continue
			}
			var refused *protect.RefusedError
			if !errors.As(err, &refused) {
				t.Errorf("%s, dry run %v: Configure = %v, want a refusal\n%s", c.name, dry, err, out)
				continue
			}
			hosttest.MustContain(t, c.name, err.Error(), c.want...)
			if !strings.Contains(steps.Fix(err), "containerd runs every program in a CNI plugin folder as SYSTEM") {
				t.Errorf("%s: no fix: %v", c.name, err)
			}
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Made) != 0 {
				t.Errorf("%s, dry run %v: the host changed: %v, made %v", c.name, dry, after, w.Made)
			}
		}
	}
}
