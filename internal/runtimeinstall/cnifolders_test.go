package runtimeinstall_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// userMade is a folder or file a local account that is not an
// administrator created: it owns it.
const userMade = "O:S-1-5-21-1004336348-1177238915-682003330-1001D:AI(A;OICIID;FA;;;S-1-5-21-1004336348-1177238915-682003330-1001)(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)"

func paths(ts []protect.Target) []string {
	var out []string
	for _, t := range ts {
		if !t.Input || !t.Tree {
			out = append(out, "not an Input Tree: "+t.Path)
			continue
		}
		out = append(out, t.Path)
	}
	return out
}

// The CNI folders are where containerd's config.toml puts them, in each
// format, else containerd's defaults; every one is judged entry by entry.
func TestCNIFoldersAreWhereConfigTomlPutsThem(t *testing.T) {
	l := config.NewLayout(config.Host{GOOS: config.Windows, Hostname: "LINE3-PC"})
	for _, c := range []struct {
		name, toml string
		want       []string
	}{
		{"no config.toml", "", []string{l.CNIBinDir, l.CNIConfDir}},
		{"containerd 1.7", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 'C:\\opt\\cni\\bin'\n  conf_dir = 'C:\\etc\\cni\\net.d'\n",
			[]string{`C:\opt\cni\bin`, `C:\etc\cni\net.d`}},
		{"containerd 2.1's bin_dirs", "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['C:\\opt\\cni\\bin', 'D:\\cni']\n",
			[]string{`C:\opt\cni\bin`, `D:\cni`, l.CNIConfDir}},
		{"only conf_dir", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = 'C:\\etc\\cni\\net.d'\n",
			[]string{l.CNIBinDir, `C:\etc\cni\net.d`}},
	} {
		var data []byte
		if c.toml != "" {
			data = []byte(c.toml)
		}
		if got := paths(runtimeinstall.CNIFolders(l, data)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: CNIFolders = %q, want %q", c.name, got, c.want)
		}
	}
	if got := runtimeinstall.CNIFolders(config.NewLayout(config.Host{GOOS: "linux"}), nil); got != nil {
		t.Errorf("outside Windows: %v", got)
	}
}

var guideFolders = runtimeinstall.CNITargets(config.Windows, []string{`C:\opt\cni\bin`}, `C:\etc\cni\net.d`)

// A CNI folder that does not exist is created open to SYSTEM and
// Administrators only from its first moment, its missing parents so that
// no one else may rename them; the folders made are returned for the
// caller's record, parents first.
func TestCreateCNIFoldersMakesTheMissingOnesRestricted(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.FS.AddDir(`C:\etc`)
	made, err := runtimeinstall.CreateCNIFolders(config.Windows, guideFolders, w.System().Protect)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`C:\opt`, `C:\opt\cni`, `C:\opt\cni\bin`, `C:\etc\cni`, `C:\etc\cni\net.d`}
	if !reflect.DeepEqual(made, want) {
		t.Errorf("made %q, want %q", made, want)
	}
	for _, d := range []string{`C:\opt\cni\bin`, `C:\etc\cni\net.d`} {
		if w.Made[d] != acl.DirectorySDDL {
			t.Errorf("%s was made with %q, want %q", d, w.Made[d], acl.DirectorySDDL)
		}
	}
	for _, d := range []string{`C:\opt`, `C:\opt\cni`, `C:\etc\cni`} {
		if w.Made[d] != acl.ParentSDDL {
			t.Errorf("parent %s was made with %q, want %q", d, w.Made[d], acl.ParentSDDL)
		}
	}
	if _, ok := w.Made[`C:\etc`]; ok {
		t.Error(`C:\etc existed and was made again`)
	}
}

// A CNI folder that exists is judged entry by entry before anything is
// made: what an administrator put there is used as it is; a plugin or
// network another account owns, a link, or a file with a second name is
// refused with its path, its owner and its fix, and nothing is created.
func TestCreateCNIFoldersJudgesWhatExists(t *testing.T) {
	const plugin = `C:\opt\cni\bin\win-bridge.exe`
	for _, c := range []struct {
		name  string
		plant func(w *hosttest.World)
		want  []string // nil: accepted
	}{
		{"plugins an administrator copied", func(w *hosttest.World) {}, nil},
		{"a plugin a user planted", func(w *hosttest.World) { w.SDDL[plugin] = userMade },
			[]string{plugin + ` (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1004336348-1177238915-682003330-1001`,
				`takeown /F "` + plugin + `" /A`}},
		{"a network a user planted", func(w *hosttest.World) {
			w.FS.AddFile(`C:\etc\cni\net.d\0-evil.conflist`, `{"type": "evil"}`)
			w.SDDL[`C:\etc\cni\net.d\0-evil.conflist`] = userMade
		}, []string{`C:\etc\cni\net.d\0-evil.conflist (in C:\etc\cni\net.d, a CNI configuration folder, whose networks choose the plugin containerd runs as SYSTEM) is owned by`}},
		{"a plugin folder a user made", func(w *hosttest.World) { w.SDDL[`C:\opt\cni\bin`] = userMade },
			[]string{`C:\opt\cni\bin (a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1004336348-1177238915-682003330-1001`}},
		{"a plugin that is a link", func(w *hosttest.World) { w.FS.AddLink(`C:\opt\cni\bin\nat.exe`) },
			[]string{`C:\opt\cni\bin\nat.exe (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is a symbolic link`}},
		{"a plugin with a second name", func(w *hosttest.World) { w.Links[plugin] = 2 },
			[]string{plugin + " (in ", "is a file with 2 names (hard links)", `fsutil hardlink list "` + plugin + `"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.SDDL, w.Links = map[string]string{}, map[string]uint32{}
			w.FS.AddFile(plugin, "MZ win-bridge")
			w.FS.AddFile(`C:\opt\cni\bin\host-local.exe`, "MZ host-local")
			c.plant(w)
			made, err := runtimeinstall.CreateCNIFolders(config.Windows, guideFolders, w.System().Protect)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if want := []string{`C:\etc`, `C:\etc\cni`, `C:\etc\cni\net.d`}; !reflect.DeepEqual(made, want) {
					t.Errorf("made %q, want %q", made, want)
				}
				return
			}
			var refused *protect.RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("CreateCNIFolders = %v, want a refusal", err)
			}
			hosttest.MustContain(t, "refusal", err.Error(), c.want...)
			if !strings.Contains(steps.Fix(err), "containerd runs every program in a CNI plugin folder as SYSTEM") {
				t.Errorf("refusal without the fix: %v", err)
			}
			if len(made) != 0 || len(w.Made) != 0 {
				t.Errorf("made %v before refusing", w.Made)
			}
		})
	}
}
