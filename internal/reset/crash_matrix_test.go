//go:build crashpoints

package reset_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/reset"
	"github.com/kubeedge-windows/edgecore/internal/steps/crashtest"
)

// TestCrashAtEveryStepOfReset crashes `reset --force` of a joined node at
// each of its step boundaries in turn, runs reset again (what its
// failure message tells the operator), and checks the host ends as a
// whole reset leaves it, never in between, and that reset touched nothing
// outside the node's own directories: the configuration is removed last,
// so a reset run again still reads from it where the certificates and the
// database are. Over the recording fakes of internal/hosttest: the
// service manager and ACLs of a Windows host cannot be had under Wine.
func TestCrashAtEveryStepOfReset(t *testing.T) {
	run := func(w *hosttest.World) error {
		return reset.Run(context.Background(), nil, &bytes.Buffer{}, false, resetOptions(w), w.System())
	}
	w := joined(t)
	layout := resetOptions(w).Layout
	before := w.State()
	var err error
	passed, _ := crashtest.Run("", func() { err = run(w) })
	if err != nil {
		t.Fatal(err)
	}
	whole := w.State()
	// The kubelet's root keeps what pods wrote; the configuration is the
	// node's.
	if out := before.Outside(whole, layout, layout.NodeDirs(), hosttest.CfgFile); len(out) > 0 {
		t.Fatalf("reset changed what is not the node's: %v", out)
	}
	if len(passed) != len(resetStepNames)+1 {
		t.Fatalf("reset passed %d boundaries, want one before each of its %d steps and one after: %v", len(passed), len(resetStepNames), passed)
	}
	m := crashtest.Matrix{Procedure: "reset --force of a joined node (Windows host, recording fakes)"}
	for _, at := range passed {
		w := joined(t)
		if _, crashed := crashtest.Run(at, func() { _ = run(w) }); !crashed {
			t.Fatalf("%s: not reached again", at)
		}
		if out := before.Outside(w.State(), layout, layout.NodeDirs(), hosttest.CfgFile); len(out) > 0 {
			t.Errorf("crash at %s: reset had changed what is not the node's: %v", at, out)
		}
		err := run(w)
		if err != nil {
			t.Errorf("crash at %s, then reset again: %v", at, err)
		}
		if diff := whole.Diff(w.State(), hosttest.Compare{}); len(diff) > 0 {
			t.Errorf("crash at %s, then reset again: the host is not as a whole reset leaves it: %s", at, strings.Join(diff, "; "))
			m.Add(at, "reset again", "HALF")
			continue
		}
		m.Add(at, "reset again", crashtest.After)
	}
	m.Print(t)
}
