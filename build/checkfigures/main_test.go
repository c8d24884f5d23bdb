package main

import (
	"strings"
	"testing"
)

var targets = map[string]bool{"bench-node": true, "e2e": true}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		tables   int
		problem  string
	}{
		{"figures with their command and a caption", "<!-- produced by: make bench-node -->\nNode benchmark, 2026-11-23\n\n| figure | ours |\n|---|---|\n| Ready | 0.58 s |\n", 1, ""},
		{"figures with their command right above", "<!-- produced by: make e2e -->\n| edge | RSS |\n|---|---|\n| Linux | 81–82 MiB |\n", 1, ""},
		{"figures typed in", "Some text.\n\n| edge | Ready |\n|---|---|\n| Linux | 0.5 s |\n", 1, "3: a table of figures without"},
		{"a comment two paragraphs up does not count", "<!-- produced by: make e2e -->\nFirst.\n\nSecond.\n| a | b |\n|---|---|\n| x | 150 ns/message |\n", 1, "5: a table of figures without"},
		{"a command that is no make target", "<!-- produced by: go test -bench . -->\n| a | b |\n|---|---|\n| x | 2.2 µs |\n", 1, "does not name a target"},
		{"an unknown target", "<!-- produced by: make nothing -->\n| a | b |\n|---|---|\n| x | 61.3 MB |\n", 1, "does not name a target"},
		{"a table without figures", "| setting | on Windows |\n|---|---|\n| path | 35 apples, v1.23, 10000/10002 |\n", 0, ""},
		{"a table in a code block", "```\n| a | 1 s |\n```\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, tables, err := check(strings.NewReader(tc.md), targets)
			if err != nil {
				t.Fatal(err)
			}
			if tables != tc.tables {
				t.Errorf("%d figure tables, want %d", tables, tc.tables)
			}
			got := strings.Join(problems, "\n")
			if (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
				t.Errorf("problems %q, want one with %q", got, tc.problem)
			}
		})
	}
}
