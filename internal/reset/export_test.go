package reset

import (
	"io"

	"github.com/kubeedge-windows/edgecore/internal/join"
)

// Inside reports whether reset with o judges p inside the node's
// directories.
func Inside(o Options, sys join.System, p string) bool {
	return newReset(o, sys, io.Discard).inside(p)
}
