//go:build crashpoints

package takeover

import (
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/steps/crashtest"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// TestCrashAtEveryStepOfTakeover crashes takeover of keadm's node at each
// of its step boundaries in turn, boots the host (the service manager
// starts the service on its command line) and runs takeover again; the
// host must end with keadm's node untouched (before) or handed to the
// upgrade journal that replaces it (after), which
// internal/upgrade's crash matrices cover from there on. The adoption is
// the test's recording fake; so are the service manager and the ACLs, which
// Wine cannot show.
func TestCrashAtEveryStepOfTakeover(t *testing.T) {
	passed, _ := crashtest.Run("", func() {
		w := newWorld(t)
		if out, err := w.run(t, false, ""); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	if len(passed) < 5 {
		t.Fatalf("takeover passed only %d boundaries: %v", len(passed), passed)
	}
	m := crashtest.Matrix{Procedure: "takeover of keadm's node (Windows host, recording fakes)"}
	for _, at := range passed {
		w := newWorld(t)
		if _, crashed := crashtest.Run(at, func() { _, _ = w.run(t, false, "") }); !crashed {
			t.Fatalf("%s: not reached again", at)
		}
		// Boot: the service starts on the command line it has now.
		w.st.State, w.st.ProcessID = service.Running, 4343
		crashedAdoption := w.adopted
		w.adopted = nil
		if crashedAdoption != nil {
			// The journal the adoption wrote finishes at boot (the
			// upgrade matrices prove it): this build is in place.
			w.stamp = version.Stamp{Program: version.ProgramThis, Version: "v0.2.0"}
		}
		out, err := w.run(t, false, "")
		var outcome string
		switch {
		case crashedAdoption != nil && err == nil:
			t.Errorf("crash at %s, after the journal took the node: takeover ran again and adopted it a second time\n%s", at, out)
		case crashedAdoption != nil && !strings.Contains(err.Error(), "there is nothing to take over"):
			t.Errorf("crash at %s, after the journal took the node: takeover again: %v", at, err)
		case crashedAdoption != nil:
			// The node is this build's: the second takeover refuses.
			outcome = crashtest.After
		case err != nil:
			t.Errorf("crash at %s, then takeover again: %v\n%s", at, err, out)
		case w.adopted == nil || w.st.CommandLine != ourLine:
			t.Errorf("crash at %s, then takeover again: adopted %v, command line %s", at, w.adopted != nil, w.st.CommandLine)
		default:
			outcome = crashtest.After
		}
		if outcome == "" {
			m.Add(at, "boot, takeover again", "HALF")
			continue
		}
		m.Add(at, "boot, takeover again", outcome)
	}
	m.Print(t)
}
