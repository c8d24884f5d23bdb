// Command checkfigures checks that every table of measured figures in a
// Markdown file says which command produced it: a comment line
//
//	<!-- produced by: make bench-node -->
//
// at most a caption paragraph above the table, naming a target of the
// Makefile. A figure table is one with a cell holding a number with a unit
// of time, size or rate (0.58 s, 61.3 MB, 150 ns/message). `make vet` runs
// it on README.md and docs/, so that a figure typed in by hand, or pasted without its
// command, fails CI.
//
//	checkfigures -makefile Makefile README.md docs/*.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// figure is a number with a unit of time, size or rate.
var figure = regexp.MustCompile(`(^|[^\w.])\d+(\.\d+)?\s?(ns|µs|us|ms|s|MB|MiB|GB|GiB|KB|KiB)(/[a-z]+)?($|[^\w])`)

var producedBy = regexp.MustCompile(`^<!-- produced by: (.+?) -->$`)

func main() {
	makefile := flag.String("makefile", "Makefile", "the Makefile whose targets the comments name")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: checkfigures [-makefile Makefile] FILE.md...")
		os.Exit(2)
	}
	targets, err := readTargets(*makefile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkfigures:", err)
		os.Exit(1)
	}
	failed, total := false, 0
	for _, path := range flag.Args() {
		problems, tables, err := checkFile(path, targets)
		if err != nil {
			fmt.Fprintln(os.Stderr, "checkfigures:", err)
			os.Exit(1)
		}
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "%s:%s\n", path, p)
		}
		failed = failed || len(problems) > 0
		total += tables
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("figures: each of the %d figure tables in %d files names the command that produced it\n", total, flag.NArg())
}

// checkFile checks the Markdown file at path (see check).
func checkFile(path string, targets map[string]bool) ([]string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return check(f, targets)
}

// readTargets lists the targets a Makefile defines ("name:" at a line's
// start, or in .PHONY).
func readTargets(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	targets := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, ".PHONY:"); ok {
			for _, t := range strings.Fields(rest) {
				targets[t] = true
			}
		}
	}
	return targets, nil
}

// check returns, for each figure table of r without a valid comment, a
// problem naming its line, and the number of figure tables.
func check(r io.Reader, targets map[string]bool) (problems []string, tables int, err error) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	isRow := func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "|") }
	inFence := false
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
			inFence = !inFence
		}
		if inFence || !isRow(lines[i]) || (i > 0 && isRow(lines[i-1])) {
			continue
		}
		end := i
		for end < len(lines) && isRow(lines[end]) {
			end++
		}
		if !hasFigure(lines[i:end]) {
			i = end - 1
			continue
		}
		tables++
		cmd, at := comment(lines, i)
		switch {
		case at < 0:
			problems = append(problems, fmt.Sprintf("%d: a table of figures without a <!-- produced by: make TARGET --> line above it", i+1))
		case !strings.HasPrefix(cmd, "make ") || !targets[strings.Fields(cmd)[1]]:
			problems = append(problems, fmt.Sprintf("%d: %q does not name a target of the Makefile (make TARGET)", at+1, cmd))
		}
		i = end - 1
	}
	return problems, tables, nil
}

func hasFigure(rows []string) bool {
	for _, r := range rows {
		for _, cell := range strings.Split(r, "|") {
			if figure.MatchString(cell) {
				return true
			}
		}
	}
	return false
}

// comment finds the produced-by comment above the table starting at line
// i: the lines between them may be blank or one caption paragraph. It
// returns the command and the comment's line, or -1.
func comment(lines []string, i int) (string, int) {
	paragraphs := 0
	inText := false
	for j := i - 1; j >= 0; j-- {
		l := strings.TrimSpace(lines[j])
		if m := producedBy.FindStringSubmatch(l); m != nil {
			return strings.TrimSpace(m[1]), j
		}
		switch {
		case l == "":
			inText = false
		case strings.HasPrefix(l, "#") || strings.HasPrefix(l, "|"):
			return "", -1
		default:
			if !inText {
				paragraphs++
				inText = true
			}
			if paragraphs > 1 {
				return "", -1
			}
		}
	}
	return "", -1
}
