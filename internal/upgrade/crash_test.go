package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// cutPower runs f and reports whether the power was cut in it.
func cutPower(f func()) (cut bool, op string) {
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(powerCut)
			if !ok {
				panic(r)
			}
			cut, op = true, p.op
		}
	}()
	f()
	return false, ""
}

// TestPowerCutAtEveryOperation cuts the power before each operation an
// upgrade (or its rollback) makes on the host, in turn: every file write,
// copy, rename and removal and every service start and stop. After each
// cut the host boots (the service manager starts whatever binary is in
// place, and that edgecore, if it can run, finds the journal and starts
// a helper to finish it), and the helper, or the next upgrade or rollback
// command when no edgecore runs, finishes the journal. Whatever the
// phase, the host must end with one whole binary in place and the service
// running: the new version if the upgrade went through, otherwise the old
// one with its own configuration and database.
//
// With runFromExe the upgrade command runs from the installed binary, as
// an operator's `edgecore.exe upgrade` does: Windows does not let it be
// replaced, so the swap renames it away and the new one in. At every cut
// the binary the service manager would start (the service's command line)
// must be whole, and during the swap one that runs, so that the host
// recovers by itself at boot, and afterwards the service must name its
// own path again.
//
// What the test assumes. The fakes make each operation whole and on disk
// the moment it returns, and a power cut falls between two of them, so
// the disk after a cut holds every operation before it and none after.
// NTFS and the registry promise no such thing by themselves: NTFS writes
// a rename's directory change when its cache manager gets to it, the
// registry writes a hive seconds after a change (its lazy flush), and
// neither keeps the order in which changes were made. The host earns the
// assumption only because every operation waits for its own flush before
// it returns, and so before the next one begins:
//   - a file (the journal, a backup's file, a copy of a binary) is written
//     beside its name, flushed, and renamed into place with the rename
//     written through; a torn or half-flushed file never carries the name
//     (hostfs.OS.WriteFile and CopyFile, release.Extract;
//     hostfs.TestOSFlushesBeforeItRenamesAndRenamesWriteThrough records it);
//   - a rename returns once it is on disk (durable.Rename: MoveFileEx with
//     MOVEFILE_WRITE_THROUGH, rename and a directory fsync elsewhere);
//   - the service's new command line is flushed, RegFlushKey on
//     HKLM\SYSTEM\CurrentControlSet\Services\edgecore, before
//     SetCommandLine returns (windows/service
//     TestSetCommandLineFlushesTheServiceKey records it).
//
// The order of the operations themselves, journal entry before the step
// it announces, is TestTheSwapPutsEachStepOnDiskBeforeTheNext's.
// Removals are not flushed: the test takes each to reach the disk no
// later than the next flushed step on its volume, as a journaling file
// system writes metadata changes (NTFS keeps one log per volume, written
// in order). The one whose loss would matter is the database's journal
// files (-journal, -wal), which restore removes before it puts the
// backup's database beside them: SQLite would replay them into it. The
// written-through rename of that database, in the same directory, is the
// flushed step right after them. Any other removal that came back would
// be a leftover recovery removes again (.new, .old, health.json), or a
// backup.json whose files no longer match it, which readBackup refuses.
// A disk whose write cache acknowledges flushes it has not made (no
// power-loss protection) breaks every one of these, and is not modelled.
func TestPowerCutAtEveryOperation(t *testing.T) {
	for _, tc := range []struct {
		name       string
		binary     string
		runFromExe bool
		// runtime is the container runtime the package carries, to
		// replace the one join installed ("": the package carries none).
		runtime string
	}{
		{"healthy new version", newBin, false, ""},
		{"new version that exits at once", badBin, false, ""},
		{"healthy new version, upgrade run from the installed binary", newBin, true, ""},
		{"new version that exits at once, upgrade run from the installed binary", badBin, true, ""},
		{"healthy new version and a new runtime", newBin, false, pkgNew},
		{"new version that exits at once, and a new runtime", badBin, false, pkgNew},
		{"healthy new version and a runtime that never answers CRI", newBin, false, pkgNoCRI},
	} {
		t.Run(tc.name, func(t *testing.T) {
			phases := map[Phase]bool{}
			runtimeCuts := 0
			for n := 1; ; n++ {
				h := newHost(tc.binary)
				var st *Staged
				if tc.runtime != "" {
					st = h.withRuntime(true, tc.runtime)
				}
				e := h.env(driverPID, "v0.1.0")
				j := h.plannedUpgrade(e)
				if st != nil {
					j, _ = h.plannedRuntimeUpgrade(t, e, st)
				}
				h.ops.n, h.ops.cutAt = 0, n
				if tc.runFromExe {
					h.fs.pinned[key(h.exe)] = true
				}
				var out bytes.Buffer
				cut, op := cutPower(func() {
					h.alive[driverPID] = true
					if _, err := Execute(context.Background(), &out, e, j); err != nil {
						t.Fatalf("Execute: %v", err)
					}
				})
				if !cut {
					if n == 1 {
						t.Fatal("the upgrade made no operation")
					}
					if tc.runFromExe && !strings.Contains(out.String(), "was in use") {
						t.Errorf("the running binary was not renamed away; the test does not cover that swap:\n%s", out.String())
					}
					break
				}
				delete(h.alive, driverPID)
				if strings.Contains(op, `\containerd\`) || strings.Contains(op, "containerd") {
					runtimeCuts++
				}
				h.fs.pinned = map[string]bool{}
				h.ops.cutAt = 0
				// What the service manager would start now.
				image, whole := h.fs.get(h.svc.exe)
				if _, known := h.svc.binaries[image]; !whole || !known {
					t.Fatalf("power cut before %s: the service names %s, which holds %q: no whole binary to start", op, h.svc.exe, image)
				}
				before, _ := loadJournal(e)
				if before != nil {
					phases[before.Phase] = true
				}
				where := "before " + op
				if before != nil {
					where += " in phase " + string(before.Phase)
				}

				h.clock.now = h.clock.now.Add(time.Minute)
				h.svc.spawned = nil
				h.svc.boot()
				if h.svc.node != nil {
					h.svc.node.tick()
				}
				// (A new binary that exits at once is whole, but runs no
				// edgecore: that host waits for the next command.)
				if before != nil && before.Phase == PhaseSwap && tc.binary == newBin && h.svc.node == nil {
					t.Errorf("power cut %s: no edgecore runs after boot (the service names %s), so nothing finishes the swap", where, h.svc.exe)
				}
				if before != nil && !before.Done() && h.svc.node != nil {
					if len(h.svc.spawned) != 1 || strings.Join(h.svc.spawned[0][1:], " ") != "upgrade --resume" {
						t.Fatalf("power cut %s: the edgecore that booted started %v, want one `upgrade --resume`", where, h.svc.spawned)
					}
					helper := h.svc.spawned[0][0]
					fromBackup := strings.HasPrefix(helper, `C:\etc\kubeedge\backup\v0.1.0\`)
					switch before.Phase {
					case PhaseSwap, PhaseStart, PhaseRollbackStop, PhaseRestore, PhaseRollbackStart:
						if !fromBackup {
							t.Errorf("power cut %s: helper %s, want the backed-up binary", where, helper)
						}
					default:
						if helper != h.exe {
							t.Errorf("power cut %s: helper %s, want the binary in place", where, helper)
						}
					}
				}
				out.Reset()
				h.alive[600] = true
				r, resumed, err := Resume(context.Background(), &out, h.env(600, "v0.1.0"), "")
				if err != nil {
					t.Fatalf("power cut %s: resume: %v", where, err)
				}
				if before != nil && !before.Done() && !resumed {
					t.Fatalf("power cut %s: the unfinished journal was not resumed", where)
				}
				after, _ := loadJournal(e)
				if after != nil && !after.Done() {
					t.Fatalf("power cut %s: journal still in phase %s\n%s", where, after.Phase, out.String())
				}
				bin, _ := h.fs.get(h.exe)
				if h.svc.st.State != service.Running {
					t.Errorf("power cut %s: the service is %v (binary %q)\n%s", where, h.svc.st.State, bin, out.String())
				}
				if h.svc.exe != h.exe || (after != nil && after.Image != "") {
					t.Errorf("power cut %s: after recovery the service starts %s (journal image %q), want %s\n%s", where, h.svc.exe, after.Image, h.exe, out.String())
				}
				success := after != nil && after.Outcome == OutcomeSuccess
				if tc.runtime != "" {
					// containerd runs, on the runtime of the version
					// that runs: the new one only with the new edgecore.
					rt := h.svc.rt
					want, version := pkgSame, "v2.1.4"
					if success {
						want, version = tc.runtime, rtNew["containerd"]
					}
					h.wantRuntime(t, want)
					if rt.st.State != service.Running || rt.running.version != version {
						t.Errorf("power cut %s: containerd is %v running %s, want %s\n%s", where, rt.st.State, rt.running.version, version, out.String())
					}
				}
				switch {
				case success:
					if bin != newBin || h.svc.running.version != "v0.2.0" {
						t.Errorf("power cut %s: success, but %q in place, running %s", where, bin, h.svc.running.version)
					}
					if tc.binary == badBin {
						t.Errorf("power cut %s: a binary that exits at once passed the gate", where)
					}
				default:
					if bin != oldBin || h.svc.running.version != "v0.1.0" {
						t.Errorf("power cut %s: outcome %v, but %q in place, running %s\n%s", where, after, bin, h.svc.running.version, out.String())
					}
					h.must(t, h.config, oldConfig)
					h.must(t, h.db, oldDB)
					if after != nil && after.Outcome == OutcomeFailed {
						t.Errorf("power cut %s: the recovery failed: %s", where, after.Reason)
					}
				}
				if resumed && r.Status == "" {
					t.Errorf("power cut %s: empty result", where)
				}
			}
			if tc.runtime != "" && runtimeCuts < 2*len(runtimeinstall.Files) {
				t.Errorf("only %d power cuts fell on the runtime's files and service", runtimeCuts)
			}
			// The cuts fell into every phase the path goes through.
			want := []Phase{PhasePlanned, PhaseStop, PhaseBackup, PhaseSwap, PhaseStart, PhaseRollbackStop, PhaseRestore, PhaseRollbackStart}
			if tc.binary == newBin && tc.runtime != pkgNoCRI {
				want = []Phase{PhasePlanned, PhaseStop, PhaseBackup, PhaseSwap, PhaseStart}
			}
			for _, p := range want {
				if !phases[p] {
					t.Errorf("no power cut fell into phase %s (phases seen: %v)", p, phases)
				}
			}
		})
	}
}

// The swap of a binary that runs, in the order the host makes its steps.
// Each step is on disk when it returns (see TestPowerCutAtEveryOperation),
// so this is also the order the disk sees them in: the journal records
// the standby image before the service is pointed at it, and the renamed
// binary before the rename; the service names its own path again before
// the journal forgets the standby.
func TestTheSwapPutsEachStepOnDiskBeforeTheNext(t *testing.T) {
	h := newHost(newBin)
	h.fs.pinned[key(h.exe)] = true
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
		t.Fatalf("%+v\n%s", r, out)
	}
	journal := "write " + h.paths.Journal
	standby := `C:\etc\kubeedge\backup\v0.1.0\edgecore.exe`
	var got []string
	swapping := false
	for _, op := range h.ops.log {
		if op == journal+` (phase swap, image "", old "")` {
			swapping = true
		}
		if swapping && (strings.HasPrefix(op, journal) || strings.Contains(op, h.exe) || strings.HasPrefix(op, "set service command line ")) {
			got = append(got, op)
		}
		if strings.HasPrefix(op, journal+" (phase start") {
			break
		}
	}
	old := fmt.Sprintf("%q", h.exe+".old")
	want := []string{
		journal + ` (phase swap, image "", old "")`,
		"copy " + h.staged + " -> " + h.exe + ".new",
		// Replacing it in one rename is refused: the binary runs.
		"rename " + h.exe + ".new -> " + h.exe,
		journal + fmt.Sprintf(` (phase swap, image %q, old "")`, standby),
		`set service command line "` + standby + `" --config "` + h.config + `"`,
		// The name of an earlier renamed binary is freed.
		"remove " + h.exe + ".old",
		journal + fmt.Sprintf(` (phase swap, image %q, old %s)`, standby, old),
		"rename " + h.exe + " -> " + h.exe + ".old",
		"rename " + h.exe + ".new -> " + h.exe,
		`set service command line "` + h.exe + `" --config "` + h.config + `"`,
		journal + ` (phase swap, image "", old ` + old + `)`,
		journal + ` (phase start, image "", old ` + old + `)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the swap's steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A power cut in the middle of an on-demand rollback: the next start
// carries the rollback out again.
func TestPowerCutDuringRollbackCommand(t *testing.T) {
	for n := 1; ; n++ {
		h := newHost(newBin)
		if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
			t.Fatalf("upgrade: %+v\n%s", r, out)
		}
		e := h.env(700, "v0.2.0")
		h.ops.n, h.ops.cutAt = 0, n
		var out bytes.Buffer
		cut, op := cutPower(func() {
			h.alive[700] = true
			Rollback(context.Background(), &out, e, h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
		})
		if !cut {
			break
		}
		delete(h.alive, 700)
		h.ops.cutAt = 0
		h.clock.now = h.clock.now.Add(time.Minute)
		h.svc.boot()
		out.Reset()
		h.alive[701] = true
		// The operator runs the rollback again; it first finishes the
		// interrupted one.
		r := Rollback(context.Background(), &out, h.env(701, "v0.2.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
		bin, _ := h.fs.get(h.exe)
		if bin != oldBin || h.svc.st.State != service.Running {
			t.Errorf("power cut before %s: %q in place, service %v; result %s\n%s", op, bin, h.svc.st.State, r.Line(), out.String())
		}
		h.must(t, h.db, oldDB)
	}
}
