//go:build crashpoints

// Package crashtest crashes a procedure at one of its step boundaries
// (steps.Boundary), for the crash-at-every-step matrix: the unit tests of
// join, reset, upgrade, rollback, takeover and the ConfigUpdateJob runner
// crash each boundary in turn over their recording fakes, run the next
// command, and check the host is as it was before the procedure or as it
// is after it. It exists only in the crashpoints build.
package crashtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// Run runs f and stops it for good at the boundary named at, as a crash
// of its process would: nothing after the boundary runs, not even f's
// deferred functions (the goroutine that runs f waits there forever, and
// the test process ends with it). With at "" or a name f never reaches, f
// runs to its end. passed are the boundaries f reached, in order, at
// included.
func Run(at string, f func()) (passed []string, crashed bool) {
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	restore := steps.SetHook(func(name string) {
		mu.Lock()
		passed = append(passed, name)
		mu.Unlock()
		if at != "" && name == at {
			close(stop)
			select {}
		}
	})
	defer restore()
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-stop:
		crashed = true
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), passed...), crashed
}

// Outcomes of a row of the matrix: the host as before the procedure, or
// as after it.
const (
	Before = "before"
	After  = "after"
)

// Matrix is one procedure's rows: each boundary crashed, the command run
// next, and how the host ended.
type Matrix struct {
	// Procedure names the scenario, "join" or "upgrade to a binary
	// that exits at once", say.
	Procedure string
	rows      [][3]string
}

// Add records that a crash at boundary, then next, left the host outcome.
func (m *Matrix) Add(boundary, next, outcome string) {
	m.rows = append(m.rows, [3]string{boundary, next, outcome})
}

// Len is the number of rows.
func (m *Matrix) Len() int { return len(m.rows) }

// String is the matrix as a table.
func (m *Matrix) String() string {
	w := [3]int{len("crash at"), len("then"), len("host ends")}
	for _, r := range m.rows {
		for i := range r {
			w[i] = max(w[i], len(r[i]))
		}
	}
	var b strings.Builder
	counts := map[string]int{}
	for _, r := range m.rows {
		counts[r[2]]++
	}
	fmt.Fprintf(&b, "Crash at every step: %s (%d boundaries: %d before, %d after, %d half)\n", m.Procedure, len(m.rows), counts[Before], counts[After], len(m.rows)-counts[Before]-counts[After])
	line := func(a, c, d string) { fmt.Fprintf(&b, "  %-*s | %-*s | %s\n", w[0], a, w[1], c, d) }
	line("crash at", "then", "host ends")
	line(strings.Repeat("-", w[0]), strings.Repeat("-", w[1]), strings.Repeat("-", w[2]))
	for _, r := range m.rows {
		line(r[0], r[1], r[2])
	}
	return b.String()
}

// MatrixOutEnv names a file each matrix is appended to (make
// crash-matrix prints it after the run); unset, the matrix is only
// logged.
const MatrixOutEnv = "CRASH_MATRIX_OUT"

// Print logs the matrix and appends it to $CRASH_MATRIX_OUT.
func (m *Matrix) Print(t testing.TB) {
	t.Helper()
	t.Log("\n" + m.String())
	out := os.Getenv(MatrixOutEnv)
	if out == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, m.String()); err != nil {
		t.Fatal(err)
	}
}
