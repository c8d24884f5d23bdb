//go:build crashpoints

package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// CrashPoints is true in the crash matrix's test build.
const CrashPoints = true

// The crash points are driven through a directory, not the environment:
// a crash may be armed for a process the test does not start itself (the
// service the service manager starts, the driver a running node starts
// for a cloud job). The directory is CrashDirEnv's value, or
// %ProgramData%\edgecore-crashpoints on Windows and
// /var/lib/edgecore-crashpoints elsewhere; while it does not exist
// nothing happens. In it:
//   - passed.log: every boundary a process reached, one line each: the
//     boundary's name, a tab, the process's ID and command;
//   - armed: the name of one boundary; the first process to reach it
//     renames the file to fired (so that the process that recovers does
//     not crash at the same place), says so on its standard error and
//     ends at once with CrashExitCode.
const (
	CrashDirEnv   = "EDGECORE_CRASHPOINTS"
	CrashExitCode = 86
	crashArmed    = "armed"
	crashFired    = "fired"
	crashPassed   = "passed.log"
)

// CrashDir is where this process looks for its crash points.
func CrashDir() string {
	if d := os.Getenv(CrashDirEnv); d != "" {
		return d
	}
	if runtime.GOOS == "windows" {
		base := os.Getenv("ProgramData")
		if base == "" {
			base = `C:\ProgramData`
		}
		return filepath.Join(base, "edgecore-crashpoints")
	}
	return "/var/lib/edgecore-crashpoints"
}

// hook, when set, is called at every boundary of this process instead of
// CrashDir's files (SetHook).
var hook func(name string)

// SetHook makes every boundary call h with its name instead of looking at
// CrashDir, until the returned function is called. The crash matrix's
// unit tests use it: h never returns at the boundary it crashes, so the
// procedure stops there with nothing after it run, deferred functions
// included, while the test's recording fakes keep the host as the crash
// left it. Tests that set it do not run in parallel.
func SetHook(h func(name string)) (restore func()) {
	prev := hook
	hook = h
	return func() { hook = prev }
}

// Name is the name of the boundary Boundary(verb, where) marks, as
// passed.log, armed and a hook see it.
func Name(verb, where string) string { return verb + ": " + where }

func boundary(verb, where string) {
	if hook != nil {
		hook(Name(verb, where))
		return
	}
	dir := CrashDir()
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return
	}
	name := Name(verb, where)
	cmd := strings.Join(os.Args[1:], " ")
	if f, err := os.OpenFile(filepath.Join(dir, crashPassed), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(f, "%s\t%d\t%s\n", name, os.Getpid(), cmd)
		f.Sync()
		f.Close()
	}
	armed := filepath.Join(dir, crashArmed)
	want, err := os.ReadFile(armed)
	if err != nil || strings.TrimSpace(string(want)) != name {
		return
	}
	// One process fires: the rename succeeds for the first only.
	if err := os.Rename(armed, filepath.Join(dir, crashFired)); err != nil {
		return
	}
	fmt.Fprintf(os.Stderr, "crash point %q reached at %s: ending process %d now\n", name, time.Now().Format(time.RFC3339Nano), os.Getpid())
	proc.Abort(CrashExitCode)
}
