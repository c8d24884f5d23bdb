// Package steps runs changes to a host as ordered steps that can be taken
// back. A Plan names each step, prints it as it starts (or, for --dry-run,
// prints them all and runs none) and, when one fails, undoes the failed
// step and those done before it in reverse; Undos is the same way back for
// a run that records each undo as it makes the change. join, reset,
// cni-config and upgrade share this package so that their progress lines,
// their indented details and their rollback read alike.
package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Step is one change a plan makes to the host.
type Step struct {
	// Name is short and names the step in progress lines and errors.
	Name string
	// Description is the one line --dry-run prints: what the step would do,
	// with the concrete paths and names.
	Description string
	// Do makes the change. Lines it writes to out appear indented under the
	// step's name.
	Do func(ctx context.Context, out io.Writer) error
	// Undo takes back what Do did, including a Do that failed half-way, so
	// it must only touch what Do recorded as done. nil means the step
	// changes nothing that needs undoing.
	Undo func(out io.Writer) error
}

// Plan is a list of steps run in order.
type Plan struct {
	// Verb names the command in errors: "join", "reset".
	Verb  string
	Steps []Step
}

// Print writes the plan, one line a step, for --dry-run.
func (p Plan) Print(w io.Writer) {
	for i, s := range p.Steps {
		fmt.Fprintf(w, "[%d/%d] %s: %s\n", i+1, len(p.Steps), s.Name, s.Description)
	}
}

// Run carries out the steps in order, printing each to w as it starts. On
// the first failure, or when ctx is cancelled between steps, it undoes the
// failed step and then every completed one in reverse, and returns a
// *StepError.
func (p Plan) Run(ctx context.Context, w io.Writer) error {
	n := len(p.Steps)
	for i, s := range p.Steps {
		if CrashPoints {
			Boundary(p.Verb, fmt.Sprintf("before step %d/%d (%s)", i+1, n, s.Name))
		}
		Title(w, i+1, n, s.Name)
		err := ctx.Err()
		ran := err == nil
		if ran {
			err = s.Do(ctx, Indented(w))
		}
		if err == nil {
			continue
		}
		fmt.Fprintf(w, "%sfailed: %v\n", Indent, FirstLine(err, Cut))
		last := i
		if !ran {
			// Cancelled before the step began: it has nothing to undo.
			last = i - 1
		}
		rolledBack, undoErrs := p.rollback(w, last)
		return &StepError{
			Verb: p.Verb, Index: i + 1, Total: n, Step: s.Name,
			Err: err, Fix: Fix(err), RolledBack: rolledBack, UndoErrs: undoErrs,
		}
	}
	if CrashPoints && n > 0 {
		Boundary(p.Verb, fmt.Sprintf("after step %d/%d (%s)", n, n, p.Steps[n-1].Name))
	}
	return nil
}

// rollback undoes steps last, last-1, ..., 0 and returns the names of the
// steps it undid and the undo failures. It goes on after a failure: each
// step's leftovers are independent, and the error lists what is left.
func (p Plan) rollback(w io.Writer, last int) ([]string, []error) {
	var names []string
	var errs []error
	started := false
	for i := last; i >= 0; i-- {
		s := p.Steps[i]
		if s.Undo == nil {
			continue
		}
		if !started {
			fmt.Fprintf(w, "Rolling back:\n")
			started = true
		}
		if CrashPoints {
			Boundary(p.Verb, fmt.Sprintf("before undo of step %d/%d (%s)", i+1, len(p.Steps), s.Name))
		}
		fmt.Fprintf(w, "  undo [%d/%d] %s\n", i+1, len(p.Steps), s.Name)
		if err := s.Undo(Indented(w)); err != nil {
			fmt.Fprintf(w, "%sfailed: %v\n", Indent, FirstLine(err, Cut))
			errs = append(errs, fmt.Errorf("undo of step %d (%s): %w", i+1, s.Name, err))
			continue
		}
		names = append(names, s.Name)
	}
	return names, errs
}

// StepError is a failed plan: which step, why, what to do about it, and
// what the rollback did.
type StepError struct {
	Verb         string
	Index, Total int
	Step         string
	Err          error
	// Fix is what the operator should do; empty when Err already says it.
	Fix string
	// RolledBack names the steps whose changes were undone, last first.
	RolledBack []string
	// UndoErrs are the undo steps that failed; what they name is still on
	// the host.
	UndoErrs []error
}

func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed at step %d/%d (%s): %v", e.Verb, e.Index, e.Total, e.Step, e.Err)
	if e.Fix != "" {
		fmt.Fprintf(&b, "\n  fix: %s", e.Fix)
	}
	if len(e.RolledBack) > 0 {
		fmt.Fprintf(&b, "\n  rolled back: %s", strings.Join(e.RolledBack, ", "))
	}
	for _, u := range e.UndoErrs {
		fmt.Fprintf(&b, "\n  not rolled back, clean up by hand: %v", u)
	}
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

// fixError attaches the operator's fix to an error.
type fixError struct {
	err error
	fix string
}

func (e *fixError) Error() string { return e.err.Error() }
func (e *fixError) Unwrap() error { return e.err }

// WithFix attaches fix to err; a plan's StepError reports it as the fix.
func WithFix(err error, fix string) error {
	if err == nil {
		return nil
	}
	return &fixError{err: err, fix: fix}
}

// Fix is the fix WithFix attached to err or to an error it wraps, or "".
func Fix(err error) string {
	var f *fixError
	if errors.As(err, &f) {
		return f.fix
	}
	return ""
}
