//go:build crashpoints

package steps_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/steps"
)

const childEnv = "STEPS_CRASHPOINT_CHILD"

// The child: two boundaries, with a deferred function that must not run
// when the second is armed.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		defer os.WriteFile(filepath.Join(dir, "deferred-ran"), nil, 0o644)
		steps.Boundary("join", "before step 1/2 (a)")
		steps.Boundary("join", "before step 2/2 (b)")
		os.WriteFile(filepath.Join(dir, "ended"), nil, 0o644)
		return
	}
	os.Exit(m.Run())
}

// A boundary armed in the crash directory ends the first process that
// reaches it at once, as a power cut would (no deferred function runs),
// after recording every boundary passed; the file that armed it is
// renamed so that the process that recovers does not crash again.
func TestArmedBoundaryEndsTheProcessThere(t *testing.T) {
	// Not t.TempDir: under Wine, removing a file a child process wrote
	// may fail with "Invalid function", which TempDir's cleanup reports
	// as a failure.
	dir, err := os.MkdirTemp("", "crashpoints")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "armed"), []byte("join: before step 2/2 (b)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() error {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir, steps.CrashDirEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		t.Logf("child: %v\n%s", err, out)
		return err
	}
	err = run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the child was not ended: %v", err)
	}
	if runtime.GOOS == "windows" && ee.ExitCode() != steps.CrashExitCode {
		t.Errorf("exit code %d, want %d", ee.ExitCode(), steps.CrashExitCode)
	}
	for _, f := range []string{"ended", "deferred-ran", "armed"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists after the crash", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fired")); err != nil {
		t.Errorf("the armed boundary was not marked fired: %v", err)
	}
	passed, _ := os.ReadFile(filepath.Join(dir, "passed.log"))
	if n := strings.Count(string(passed), "\n"); n != 2 || !strings.HasPrefix(string(passed), "join: before step 1/2 (a)\t") {
		t.Errorf("passed.log:\n%s", passed)
	}
	// Run again, the process passes the boundary that fired.
	if err := run(); err != nil {
		t.Fatalf("the second run crashed too: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ended")); err != nil {
		t.Errorf("the second run did not end normally")
	}
}
