package steps

import (
	"errors"
	"fmt"
	"io"
)

// Undos are the ways back from what a run has done so far, for a run whose
// changes depend on what it finds (cni-config reuses an HNS network or
// creates one) and so are not a fixed list of steps: each change pushes its
// undo once made, and a later failure runs them in reverse.
type Undos []undo

type undo struct {
	what string
	do   func() error
}

// Push records the way back from a change just made; what names it in the
// output.
func (u *Undos) Push(what string, do func() error) { *u = append(*u, undo{what, do}) }

// Run undoes everything, newest first, and says what it undid and what it
// could not. It goes on after a failure, as a plan's rollback does.
func (u Undos) Run(out io.Writer) error {
	var errs []error
	for i := len(u) - 1; i >= 0; i-- {
		if err := u[i].do(); err != nil {
			fmt.Fprintf(out, "could not undo: %s: %v\n", u[i].what, err)
			errs = append(errs, fmt.Errorf("%s: %w", u[i].what, err))
			continue
		}
		fmt.Fprintf(out, "undone: %s\n", u[i].what)
	}
	return errors.Join(errs...)
}
