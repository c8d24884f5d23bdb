package steps

import (
	"fmt"
	"io"
	"strings"
)

// Indent is how far the lines a step prints are moved right, so that they
// sit under the step's name after "[i/n] ".
const Indent = "      "

// Title writes the line that starts step i of n.
func Title(w io.Writer, i, n int, name string) {
	fmt.Fprintf(w, "[%d/%d] %s\n", i, n, name)
}

// Cut is what FirstLine puts where it cut lines off, for output whose
// reader gets the whole error later (a plan returns it).
const Cut = " …"

// FirstLine keeps progress output to one line per failure: the first line
// of err's message, followed by cut when there were more. Plans pass Cut;
// cni-config passes "", as its output has always shown the first line
// alone.
func FirstLine(err error, cut string) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + cut
	}
	return s
}

// Indented is a writer whose lines appear under the current step.
func Indented(w io.Writer) io.Writer { return Prefixed(w, Indent) }

// Prefixed puts prefix at the start of every line written through it,
// also when a line arrives in several writes.
func Prefixed(w io.Writer, prefix string) io.Writer {
	return &prefixWriter{w: w, prefix: prefix}
}

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
