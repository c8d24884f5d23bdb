package containerd

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change, as
// diff -u does.
const diffContext = 3

// Diff returns a unified diff from old to new, labelled with name, for
// --dry-run: the operator sees the lines that would change and nothing
// else. It is "" when the two are equal. Carriage returns are not shown.
func Diff(name string, old, new []byte) string {
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := diffLines(a, b)
	var out strings.Builder
	for start := 0; start < len(ops); {
		// Find the next change and the extent of its hunk: changes closer
		// than twice the context share one hunk.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		last := first
		for i := first; i < len(ops); i++ {
			if ops[i].kind != ' ' {
				last = i
			} else if i-last > 2*diffContext {
				break
			}
		}
		from := max(first-diffContext, start)
		to := min(last+diffContext+1, len(ops))
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s (edited)\n", name, name)
		}
		aStart, bStart, aLen, bLen := ops[from].a, ops[from].b, 0, 0
		for _, op := range ops[from:to] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[from:to] {
			out.WriteString(string(op.kind) + op.text + "\n")
		}
		start = to
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int // 0-based line numbers in old and new before this op
}

// diffLines is a longest-common-subsequence diff. config.toml has a few
// hundred lines, so the quadratic table costs well under a megabyte.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			// Removed lines come before the lines that replace them.
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
