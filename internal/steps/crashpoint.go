package steps

// Crash points. Every procedure that changes the host (join, reset,
// upgrade, rollback, takeover, a ConfigUpdateJob's driver) marks the
// boundaries between its changes through this one function: the plan's
// runner below each step and undo, the upgrade journal at each phase. A
// test build (the crashpoints build tag, which `make windows`, `make
// linux` and build/package.sh never set) can end the process at any one
// of them, at once and with no deferred undo, as a power cut would; the
// crash-at-every-step matrix (test/e2e/crash_test.go) then runs the next
// command or a start and checks that the host is either as it was before
// the procedure or as it is after it, never half-way. In a release build
// CrashPoints is false, every call site's `if steps.CrashPoints` block is
// dead code the compiler drops, and Boundary does nothing.

// Boundary marks that the procedure verb stands at where: every change
// before it is made, none after it. Call it as
//
//	if steps.CrashPoints {
//		steps.Boundary(verb, fmt.Sprintf(...))
//	}
//
// so that a release build does not even format the name.
func Boundary(verb, where string) { boundary(verb, where) }
