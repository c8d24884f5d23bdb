//go:build crashpoints

package join_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/reset"
	"github.com/kubeedge-windows/edgecore/internal/steps/crashtest"
)

// joinFolders are the folders join may change: the node's own, the
// kubelet's root and the pod logs, and the runtime's and the pod
// network's, which join installs.
func joinFolders(l config.Layout) []string {
	return append(l.NodeDirs(), l.KubeletRootDir, l.PodLogsDir, l.ContainerdDir, l.ContainerdDataDir, l.CNIConfDir, l.CNIBinDir)
}

// TestCrashAtEveryStepOfJoin crashes join at each of its step boundaries
// in turn (before each step, after the last, before each undo of a join
// that fails and rolls back), then runs the next command an operator
// would, and checks that the host ends as it was before join or as a
// whole join leaves it, never in between, and that nothing outside the
// folders join owns was touched. The crash leaves join's record of its
// progress (join-progress.json) behind, which the next join and reset
// read. The host is the recording fake of internal/hosttest: the service
// manager, ACLs and HNS of a Windows host cannot be had under Wine.
func TestCrashAtEveryStepOfJoin(t *testing.T) {
	for _, tc := range []struct {
		name string
		// edgecore sets up how the service behaves once started.
		edgecore func(w *hosttest.World)
		// joins: whether the join goes through.
		joins bool
		// next is the command run after the crash; want the host it
		// must leave.
		next string
	}{
		{"join", func(w *hosttest.World) { w.EdgecoreIssues(true) }, true, "join again"},
		{"join", func(w *hosttest.World) { w.EdgecoreIssues(true) }, true, "reset"},
		{"join refused by cloudcore (rolls back)", func(w *hosttest.World) { w.EdgecorePanics(hosttest.PanicRefused) }, false, "join again"},
	} {
		t.Run(tc.name+", then "+tc.next, func(t *testing.T) {
			world := func() *hosttest.World {
				w := hosttest.NewWorld(t)
				w.WithBundle()
				tc.edgecore(w)
				return w
			}
			run := func(w *hosttest.World) error {
				var out bytes.Buffer
				return join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System())
			}
			w := world()
			layout := w.Options().Layout
			before := w.State()
			var err error
			passed, _ := crashtest.Run("", func() { err = run(w) })
			if (err == nil) != tc.joins {
				t.Fatalf("join without a crash: %v", err)
			}
			whole := w.State()
			if out := before.Outside(whole, layout, joinFolders(layout), hosttest.CfgFile); len(out) > 0 {
				t.Fatalf("join changed what is not its own: %v", out)
			}
			if len(passed) < join.NumJoinSteps {
				t.Fatalf("join passed only %d boundaries: %v", len(passed), passed)
			}
			// What each next command must leave.
			want, wantName := whole, crashtest.After
			cmp := hosttest.Compare{Presence: []string{hosttest.LogFile}}
			if !tc.joins {
				// A join that fails keeps its log and panic.log for the
				// operator, and nothing else: the rest is as before.
				if diff := before.Diff(whole, hosttest.Compare{FilesOnly: true}); !sameStrings(diff, "new: "+hosttest.LogFile, "new: "+hosttest.PanicFile) {
					t.Fatalf("a join that fails left: %v", diff)
				}
				wantName = crashtest.Before
				cmp.Presence = append(cmp.Presence, hosttest.PanicFile)
			}
			if tc.next == "reset" {
				w := world()
				if err := run(w); err != nil {
					t.Fatal(err)
				}
				if err := resetHost(w); err != nil {
					t.Fatal(err)
				}
				// Reset keeps the kubelet's root and the pod logs (what
				// pods wrote) and the folders above the node's, and
				// restricted folders stay so: the files, services and
				// HNS objects are as before join.
				want, wantName = before, crashtest.Before
				cmp = hosttest.Compare{FilesOnly: true}
				if diff := before.Diff(w.State(), cmp); len(diff) > 0 {
					t.Fatalf("join and reset left: %v", diff)
				}
			}
			m := crashtest.Matrix{Procedure: tc.name + ", then " + tc.next + " (Windows host, recording fakes)"}
			for _, at := range passed {
				w := world()
				_, crashed := crashtest.Run(at, func() { _ = run(w) })
				if !crashed {
					t.Fatalf("%s: not reached again", at)
				}
				half := w.State()
				if out := before.Outside(half, layout, joinFolders(layout), hosttest.CfgFile); len(out) > 0 {
					t.Errorf("crash at %s: join had changed what is not its own: %v", at, out)
				}
				var err error
				switch tc.next {
				case "join again":
					err = run(w)
				case "reset":
					err = resetHost(w)
				}
				if tc.joins && tc.next == "join again" && err != nil && !strings.Contains(err.Error(), "earlier installation") {
					t.Errorf("crash at %s: %s: %v", at, tc.next, err)
				}
				if out := before.Outside(w.State(), layout, joinFolders(layout), hosttest.CfgFile); len(out) > 0 {
					t.Errorf("crash at %s, then %s: changed what is not the node's: %v", at, tc.next, out)
				}
				if diff := want.Diff(w.State(), cmp); len(diff) > 0 {
					t.Errorf("crash at %s, then %s: the host is neither as before nor as after join (%v): %s", at, tc.next, err, strings.Join(diff, "; "))
					m.Add(at, tc.next, "HALF")
					continue
				}
				m.Add(at, tc.next, wantName)
			}
			m.Print(t)
		})
	}
}

// resetHost runs `edgecore.exe reset --force --network` on w.
func resetHost(w *hosttest.World) error {
	var out bytes.Buffer
	layout := config.NewLayout(w.Host)
	o := reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Host: w.Host, Layout: layout, Force: true,
		Network: podnet.Remover{StateFile: podnet.StateFile(layout), FS: w.FS, HNS: w.HNS}}
	return reset.Run(context.Background(), nil, &out, false, o, w.System())
}

// sameStrings reports whether got holds exactly want, in any order.
func sameStrings(got []string, want ...string) bool {
	return sameSet(got, want)
}
