// Package join carries out `edgecore.exe join` and `edgecore.exe reset`.
// Both are plans: ordered steps, each of which says in one line what it
// does, makes its change, and knows how to take that change back. A plan
// runs its steps in order and prints each as it starts; when one fails, the
// steps already done (and the failed one's partial work) are undone in
// reverse, and the error names the step and the fix. Every effect on the
// host goes through the System the caller passes, so the whole of join and
// reset, rollback included, is tested with fakes on any build host.
package join

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

// indent is how far the lines a step prints are moved right, so that they
// sit under the step's name after "[i/n] ".
const indent = "      "

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
		fmt.Fprintf(w, "[%d/%d] %s\n", i+1, n, s.Name)
		err := ctx.Err()
		ran := err == nil
		if ran {
			err = s.Do(ctx, &prefixWriter{w: w, prefix: indent})
		}
		if err == nil {
			continue
		}
		fmt.Fprintf(w, "%sfailed: %v\n", indent, firstLine(err))
		last := i
		if !ran {
			// Cancelled before the step began: it has nothing to undo.
			last = i - 1
		}
		rolledBack, undoErrs := p.rollback(w, last)
		fix := ""
		var f *fixError
		if errors.As(err, &f) {
			fix = f.fix
		}
		return &StepError{
			Verb: p.Verb, Index: i + 1, Total: n, Step: s.Name,
			Err: err, Fix: fix, RolledBack: rolledBack, UndoErrs: undoErrs,
		}
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
		fmt.Fprintf(w, "  undo [%d/%d] %s\n", i+1, len(p.Steps), s.Name)
		if err := s.Undo(&prefixWriter{w: w, prefix: indent}); err != nil {
			fmt.Fprintf(w, "%sfailed: %v\n", indent, firstLine(err))
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

// firstLine keeps progress output to one line per failure; the full
// (possibly multi-line) error is returned to the caller.
func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// prefixWriter puts prefix at the start of every line written through it.
type prefixWriter struct {
	w       io.Writer
	prefix  string
	midLine bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if !p.midLine {
			out = append(out, p.prefix...)
			p.midLine = true
		}
		out = append(out, c)
		if c == '\n' {
			p.midLine = false
		}
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
