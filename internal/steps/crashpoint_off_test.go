//go:build !crashpoints

package steps_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// A release build has no crash point: even with the crash matrix's
// directory in place and a boundary armed, Boundary neither records nor
// ends the process. (make crash-matrix also checks the release binaries
// hold none of the crash points' code.)
func TestReleaseBuildHasNoCrashPoints(t *testing.T) {
	if steps.CrashPoints {
		t.Fatal("CrashPoints is true without the crashpoints build tag")
	}
	dir := t.TempDir()
	t.Setenv("EDGECORE_CRASHPOINTS", dir)
	if err := os.WriteFile(filepath.Join(dir, "armed"), []byte("join: before step 1/1 (x)"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps.Boundary("join", "before step 1/1 (x)")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "armed" {
		t.Errorf("a release build's Boundary changed the crash directory: %v", entries)
	}
}
