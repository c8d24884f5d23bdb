// Command wintest runs the Windows tests of `make wine-test` and counts
// their results.
//
//	wintest json -results DIR -label NAME < go-test-json
//	    records the events of `go test -json` (test/wine, which drives
//	    edgecore.exe from Linux) and prints their output as -v would;
//	wintest windows -results DIR -tags TAGS -run build/wine/run.sh
//	    finds every package whose Windows build compiles a file its Linux
//	    build does not (a _windows.go file, a _windows_test.go file,
//	    test/winservice's tests), cross-compiles its test binary, runs it
//	    under Wine through the -run script and records its events (go tool
//	    test2json); a package with Windows code and no tests is recorded
//	    as such;
//	wintest summary -results DIR
//	    prints passed, failed and skipped tests per package and every skip
//	    with its reason; a test whose subtests all skipped counts as
//	    skipped, not passed; exits 1 when a test or a package failed.
//
// The summary is what CI shows of the Windows tests: which ran, and which
// Wine could not run and why.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	results := fs.String("results", "", "directory of the recorded events")
	label := fs.String("label", "", "name of the recording (json)")
	tags := fs.String("tags", "", "build tags of the test binaries (windows)")
	runner := fs.String("run", "", "script that runs a Windows program under Wine (windows)")
	_ = fs.Parse(os.Args[2:])
	if *results == "" {
		usage()
	}
	if err := os.MkdirAll(*results, 0o755); err != nil {
		fatal(err)
	}
	var err error
	switch os.Args[1] {
	case "json":
		if *label == "" {
			usage()
		}
		err = record(os.Stdin, os.Stdout, filepath.Join(*results, fileName(*label)))
	case "windows":
		if *runner == "" {
			usage()
		}
		err = runWindows(*results, *tags, *runner, fs.Args())
	case "summary":
		var failed bool
		failed, err = summarize(*results, os.Stdout)
		if err == nil && failed {
			os.Exit(1)
		}
	default:
		usage()
	}
	if err != nil {
		fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: wintest json|windows|summary -results DIR [-label NAME] [-tags TAGS -run SCRIPT] [packages]")
	os.Exit(2)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "wintest:", err)
	os.Exit(1)
}

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string `json:",omitempty"`
	Output  string `json:",omitempty"`
}

func fileName(label string) string {
	return strings.NewReplacer("/", "_", "\\", "_", " ", "_").Replace(label) + ".jsonl"
}

// record copies the events of r into path and their output to w.
func record(r io.Reader, w io.Writer, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			// Not an event (a build error printed as is): kept as
			// output.
			e = event{Action: "output", Output: string(line) + "\n"}
			line, _ = json.Marshal(e)
		}
		if e.Output != "" {
			fmt.Fprint(w, e.Output)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return f.Close()
}

// listed is what go list says of one package for one OS.
type listed struct {
	ImportPath                         string
	GoFiles, TestGoFiles, XTestGoFiles []string
}

// files are the Go files the package's build and test build compile.
func (l listed) files() []string {
	return append(append(append([]string{}, l.GoFiles...), l.TestGoFiles...), l.XTestGoFiles...)
}

func (l listed) hasTests() bool { return len(l.TestGoFiles)+len(l.XTestGoFiles) > 0 }

// windowsPackages lists the packages whose Windows build compiles a file
// the Linux build leaves out, and of those the ones without a test file:
// go list's view for each OS, compared.
func windowsPackages(tags string) (run, untested []string, err error) {
	list := func(goos string) (map[string]listed, error) {
		cmd := exec.Command("go", "list", "-tags", tags, "-json=ImportPath,GoFiles,TestGoFiles,XTestGoFiles", "./...")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list for %s: %w", goos, err)
		}
		m := map[string]listed{}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var l listed
			if err := dec.Decode(&l); err != nil {
				return nil, fmt.Errorf("go list for %s: %w", goos, err)
			}
			m[l.ImportPath] = l
		}
		return m, nil
	}
	linux, err := list("linux")
	if err != nil {
		return nil, nil, err
	}
	windows, err := list("windows")
	if err != nil {
		return nil, nil, err
	}
	run, untested = windowsOnly(linux, windows)
	return run, untested, nil
}

// windowsOnly names, in order, the packages of windows with a file that
// linux lacks: those with test files to run, and those without.
func windowsOnly(linux, windows map[string]listed) (run, untested []string) {
	for p, w := range windows {
		have := map[string]bool{}
		for _, f := range linux[p].files() {
			have[f] = true
		}
		for _, f := range w.files() {
			if have[f] {
				continue
			}
			if w.hasTests() {
				run = append(run, p)
			} else {
				untested = append(untested, p)
			}
			break
		}
	}
	sort.Strings(run)
	sort.Strings(untested)
	return run, untested
}

// runWindows builds and runs each package's Windows test binary. A package
// whose binary does not build is recorded as failed; the others still run,
// and the error at the end names every package that failed.
func runWindows(results, tags, runner string, pkgs []string) error {
	if len(pkgs) == 0 {
		var untested []string
		var err error
		if pkgs, untested, err = windowsPackages(tags); err != nil {
			return err
		}
		for _, p := range untested {
			fmt.Printf("=== %s has Windows code and no tests\n", p)
			if err := writeEvents(filepath.Join(results, fileName(p)), event{Action: "skip", Package: p, Output: noTests}); err != nil {
				return err
			}
		}
	}
	bin := filepath.Join(results, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	dirs, err := packageDirs(tags, pkgs)
	if err != nil {
		return err
	}
	if runner, err = filepath.Abs(runner); err != nil {
		return err
	}
	var failed []string
	for _, p := range pkgs {
		path := filepath.Join(results, fileName(p))
		exe, err := filepath.Abs(filepath.Join(bin, filepath.Base(p)+".test.exe"))
		if err != nil {
			return err
		}
		fmt.Printf("=== Windows test binary of %s, under Wine\n", p)
		build := exec.Command("go", "test", "-c", "-tags", tags, "-o", exe, p)
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64")
		if out, err := build.CombinedOutput(); err != nil {
			if err := writeEvents(path, event{Action: "output", Package: p, Output: string(out)}, event{Action: "fail", Package: p}); err != nil {
				return err
			}
			fmt.Printf("%s\n%s: the test binary does not build: %v\n", out, p, err)
			failed = append(failed, p)
			continue
		}
		// test2json turns the binary's -test.v=test2json output into
		// events; its exit status is the binary's, which the summary
		// reads from the events instead.
		cmd := exec.Command("go", "tool", "test2json", "-p", p, runner, exe, "-test.v=test2json", "-test.count=1", "-test.timeout=15m")
		// In the package's folder, as go test runs a test binary: tests
		// read their testdata/ from there.
		cmd.Dir = dirs[p]
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		if err := record(stdout, os.Stdout, path); err != nil {
			return err
		}
		// The events say which tests failed; the exit status also says
		// so for a binary that ended before reporting.
		if err := cmd.Wait(); err != nil {
			failed = append(failed, p)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d test binaries failed under Wine: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// packageDirs are the source folders of pkgs, by import path.
func packageDirs(tags string, pkgs []string) (map[string]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-tags", tags, "-json=ImportPath,Dir"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	dirs := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var l struct{ ImportPath, Dir string }
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		dirs[l.ImportPath] = l.Dir
	}
	return dirs, nil
}

func writeEvents(path string, events ...event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return f.Close()
}

// noTests is the output recorded for a package with Windows code and no
// test file.
const noTests = "[no test files]"

// pkgResult is what the summary says of one package.
type pkgResult struct {
	Name                   string
	Passed, Failed, Skips  []string
	SkipReasons            map[string]string
	PackageFailed, Outcome bool
	// NoTests is set for a package with Windows code and no test file.
	NoTests bool
}

// summarize prints the results recorded in dir; failed is true when a test
// or a package failed, or a package recorded no outcome (it crashed).
func summarize(dir string, w io.Writer) (failed bool, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		return false, fmt.Errorf("no results in %s", dir)
	}
	var all []*pkgResult
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return false, err
		}
		pkgs, err := parse(r)
		r.Close()
		if err != nil {
			return false, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, pkgs...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	fmt.Fprintln(w, "\nWindows tests under Wine (make wine-test):")
	fmt.Fprintf(w, "%-60s %6s %6s %7s\n", "package", "passed", "failed", "skipped")
	var np, nf, ns int
	for _, p := range all {
		status := ""
		if p.NoTests {
			status = " (Windows code, no tests)"
		} else if p.PackageFailed && len(p.Failed) == 0 {
			status = " (package failed: see its output above)"
		} else if !p.Outcome {
			status = " (no result: the test binary ended early)"
		}
		fmt.Fprintf(w, "%-60s %6d %6d %7d%s\n", p.Name, len(p.Passed), len(p.Failed), len(p.Skips), status)
		np, nf, ns = np+len(p.Passed), nf+len(p.Failed), ns+len(p.Skips)
		if p.PackageFailed || len(p.Failed) > 0 || !p.Outcome {
			failed = true
		}
	}
	fmt.Fprintf(w, "%-60s %6d %6d %7d\n", "total", np, nf, ns)
	for _, p := range all {
		for _, t := range p.Failed {
			fmt.Fprintf(w, "FAIL %s %s\n", p.Name, t)
		}
	}
	if ns > 0 {
		fmt.Fprintln(w, "Skipped, and why:")
		for _, p := range all {
			for _, t := range p.Skips {
				fmt.Fprintf(w, "SKIP %s %s: %s\n", p.Name, t, p.SkipReasons[t])
			}
		}
	}
	return failed, nil
}

// parse reads one recording's events into per-package results.
func parse(r io.Reader) ([]*pkgResult, error) {
	byName := map[string]*pkgResult{}
	var order []string
	output := map[string][]string{} // package + test → output lines
	// Each package's tests in the order they ended, with their outcome.
	ended := map[string][]string{}
	outcome := map[string]string{} // package + test → pass, fail or skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, err
		}
		if e.Package == "" {
			continue
		}
		p := byName[e.Package]
		if p == nil {
			p = &pkgResult{Name: e.Package, SkipReasons: map[string]string{}}
			byName[e.Package] = p
			order = append(order, e.Package)
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output":
			output[key] = append(output[key], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				p.Outcome = true
				p.PackageFailed = e.Action == "fail"
				p.NoTests = e.Action == "skip" && strings.Contains(e.Output, noTests)
				continue
			}
			if _, seen := outcome[key]; !seen {
				ended[e.Package] = append(ended[e.Package], e.Test)
			}
			outcome[key] = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var out []*pkgResult
	for _, n := range order {
		p := byName[n]
		tests := ended[n]
		// A test that passed with subtests that all skipped ran nothing
		// of its own worth counting: it counts as skipped, deepest first
		// so that a parent of such parents does too.
		byDepth := append([]string{}, tests...)
		sort.SliceStable(byDepth, func(i, j int) bool { return strings.Count(byDepth[i], "/") > strings.Count(byDepth[j], "/") })
		allSkipped := map[string]int{}
		for _, t := range byDepth {
			key := n + "\x00" + t
			if outcome[key] != "pass" {
				continue
			}
			var subs, skipped int
			for _, c := range tests {
				if parent, _, ok := cutLast(c); ok && parent == t {
					subs++
					if outcome[n+"\x00"+c] == "skip" {
						skipped++
					}
				}
			}
			if subs > 0 && skipped == subs {
				outcome[key] = "skip"
				allSkipped[t] = subs
			}
		}
		for _, t := range tests {
			key := n + "\x00" + t
			switch outcome[key] {
			case "pass":
				p.Passed = append(p.Passed, t)
			case "fail":
				p.Failed = append(p.Failed, t)
			case "skip":
				p.Skips = append(p.Skips, t)
				if k := allSkipped[t]; k > 0 {
					p.SkipReasons[t] = fmt.Sprintf("all %d of its subtests skipped", k)
				} else {
					p.SkipReasons[t] = skipReason(output[key])
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// cutLast splits a subtest's name at its last slash: its parent and its
// own name. A name without one is a top-level test.
func cutLast(name string) (parent, sub string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}

// skipReason is the last message a skipped test logged, which is the one
// t.Skip gave: the "file_test.go:N: " line and the lines continuing it.
func skipReason(lines []string) string {
	var msg []string
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "", strings.HasPrefix(trimmed, "=== "), strings.HasPrefix(trimmed, "--- "):
		case isLogStart(trimmed):
			msg = []string{trimmed[strings.Index(trimmed, ": ")+2:]}
		default:
			msg = append(msg, trimmed)
		}
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}

// isLogStart reports whether s begins as testing's log lines do:
// "name_test.go:123: ".
func isLogStart(s string) bool {
	i := strings.Index(s, ".go:")
	if i < 0 || strings.ContainsAny(s[:i], " \t") {
		return false
	}
	rest := s[i+len(".go:"):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	return j > 0 && strings.HasPrefix(rest[j:], ": ")
}
