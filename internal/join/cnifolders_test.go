package join_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// The host's containerd runs every plugin of the CNI bin folders its
// config.toml names, as SYSTEM: join judges them entry by entry, and the
// configuration folder with them, whatever --runtime says, before any
// change, the dry run included. An administrator's plugins pass.
func TestJoinJudgesTheHostsCNIFolders(t *testing.T) {
	const toml = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 'C:\\opt\\cni\\bin'\n  conf_dir = 'C:\\etc\\cni\\net.d'\n"
	const plugin = `C:\opt\cni\bin\win-bridge.exe`
	for _, tc := range []struct {
		name   string
		choice string
		plant  func(w *hosttest.World)
		want   []string // nil: accepted
	}{
		{"plugins an administrator copied", runtimeinstall.ChoiceHost, func(*hosttest.World) {}, nil},
		{"a plugin a user planted", runtimeinstall.ChoiceHost, func(w *hosttest.World) { w.SDDL[plugin] = userMade },
			[]string{plugin + ` (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1004336348-1177238915-682003330-1001`,
				`takeown /F "` + plugin + `" /A`}},
		{"a network a user planted, with the containerd service", runtimeinstall.ChoiceAuto, func(w *hosttest.World) {
			w.FS.AddFile(`C:\etc\cni\net.d\0-evil.conf`, `{"type": "evil"}`)
			w.SDDL[`C:\etc\cni\net.d\0-evil.conf`] = userMade
		}, []string{`C:\etc\cni\net.d\0-evil.conf (in C:\etc\cni\net.d, a CNI configuration folder`, "is owned by S-1-5-21-1004336348-1177238915-682003330-1001"}},
		{"a plugin that is a link", runtimeinstall.ChoiceHost, func(w *hosttest.World) { w.FS.AddLink(`C:\opt\cni\bin\nat.exe`) },
			[]string{`C:\opt\cni\bin\nat.exe (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is a symbolic link`}},
		{"the release's containerd over a plugin a user planted", runtimeinstall.ChoiceBundled, func(w *hosttest.World) { w.SDDL[hosttest.CNIBinDir+`\nat.exe`] = userMade },
			[]string{hosttest.CNIBinDir + `\nat.exe (in ` + hosttest.CNIBinDir + `, a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1004336348-1177238915-682003330-1001`}},
		{"the release's containerd over an administrator's plugin", runtimeinstall.ChoiceBundled, func(w *hosttest.World) {}, nil},
		{"a plugin folder every user may add to", runtimeinstall.ChoiceHost, func(w *hosttest.World) { w.SDDL[`C:\opt\cni\bin`] = adminMadeInProgramData },
			[]string{`C:\opt\cni\bin (a CNI plugin folder, whose every program containerd runs as SYSTEM) is writable by others: BUILTIN\Users may change or delete`,
				`icacls "C:\opt\cni\bin" /remove:g *S-1-5-32-545`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.SDDL = map[string]string{}
			w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
			w.FS.AddFile(hosttest.CtrdConfig, toml)
			w.FS.AddFile(plugin, "MZ win-bridge")
			w.FS.AddDir(`C:\etc\cni\net.d`)
			o := w.Options()
			if tc.choice == runtimeinstall.ChoiceBundled {
				// The release's containerd, over CNI folders that exist.
				w = hosttest.NewWorld(t)
				w.SDDL = map[string]string{}
				w.WithBundle()
				w.FS.AddFile(hosttest.CNIBinDir+`\nat.exe`, "MZ nat")
				o = hosttest.WithL2Bridge(w.Options())
			}
			tc.plant(w)
			before := w.FS.Paths()
			o.Runtime, o.DryRun = tc.choice, true
			var out bytes.Buffer
			err := join.Run(context.Background(), &out, o, w.System())
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, out.String())
				}
				return
			}
			se := stepError(t, err, 1)
			hosttest.MustContain(t, "error", err.Error(), tc.want...)
			hosttest.MustContain(t, "fix", se.Fix, "containerd runs every program in a CNI plugin folder as SYSTEM")
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
				t.Errorf("the host changed: %v %v", after, w.Services.Calls)
			}
		})
	}
}
