package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// events as go tool test2json writes them for a binary with a passing test,
// a failing one, a parent whose one subtest skipped with a two-line reason,
// a skipped test that logged before skipping, and a parent with a passing
// and a skipped subtest.
const recorded = `{"Action":"start","Package":"example/a"}
{"Action":"run","Package":"example/a","Test":"TestPass"}
{"Action":"output","Package":"example/a","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Action":"pass","Package":"example/a","Test":"TestPass"}
{"Action":"run","Package":"example/a","Test":"TestFail"}
{"Action":"output","Package":"example/a","Test":"TestFail","Output":"    a_test.go:10: broken\n"}
{"Action":"fail","Package":"example/a","Test":"TestFail"}
{"Action":"output","Package":"example/a","Test":"TestParent/sub","Output":"=== RUN   TestParent/sub\n"}
{"Action":"output","Package":"example/a","Test":"TestParent/sub","Output":"    a_windows_test.go:20: Wine keeps no\n"}
{"Action":"output","Package":"example/a","Test":"TestParent/sub","Output":"        file ACLs\n"}
{"Action":"output","Package":"example/a","Test":"TestParent/sub","Output":"--- SKIP: TestParent/sub (0.00s)\n"}
{"Action":"skip","Package":"example/a","Test":"TestParent/sub"}
{"Action":"pass","Package":"example/a","Test":"TestParent"}
{"Action":"output","Package":"example/a","Test":"TestLogged","Output":"    a_test.go:30: some log: with a colon\n"}
{"Action":"output","Package":"example/a","Test":"TestLogged","Output":"    a_test.go:31: HNS is absent\n"}
{"Action":"skip","Package":"example/a","Test":"TestLogged"}
{"Action":"skip","Package":"example/a","Test":"TestMixed/skipped"}
{"Action":"pass","Package":"example/a","Test":"TestMixed/ran"}
{"Action":"pass","Package":"example/a","Test":"TestMixed"}
{"Action":"fail","Package":"example/a"}
{"Action":"start","Package":"example/b"}
{"Action":"pass","Package":"example/b","Test":"TestB"}
`

func TestParseCountsEachTestAndKeepsTheSkipReason(t *testing.T) {
	pkgs, err := parse(strings.NewReader(recorded))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 {
		t.Fatalf("parsed %d packages, want 2", len(pkgs))
	}
	a, b := pkgs[0], pkgs[1]
	// TestParent ran nothing but its skipped subtest: skipped, not passed.
	if !reflect.DeepEqual(a.Passed, []string{"TestPass", "TestMixed/ran", "TestMixed"}) || !reflect.DeepEqual(a.Failed, []string{"TestFail"}) ||
		!reflect.DeepEqual(a.Skips, []string{"TestParent/sub", "TestParent", "TestLogged", "TestMixed/skipped"}) {
		t.Errorf("example/a: passed %q failed %q skipped %q", a.Passed, a.Failed, a.Skips)
	}
	if !a.Outcome || !a.PackageFailed {
		t.Errorf("example/a: outcome %v, failed %v; want a failed package", a.Outcome, a.PackageFailed)
	}
	if got := a.SkipReasons["TestParent/sub"]; got != "Wine keeps no file ACLs" {
		t.Errorf("subtest skip reason %q", got)
	}
	if got := a.SkipReasons["TestLogged"]; got != "HNS is absent" {
		t.Errorf("the skip reason is the last message, got %q", got)
	}
	if got := a.SkipReasons["TestParent"]; got != "all 1 of its subtests skipped" {
		t.Errorf("an all-skipped parent's reason %q", got)
	}
	if b.Outcome {
		t.Error("example/b recorded no package outcome (its binary ended early), yet has one")
	}
}

func TestSummaryListsSkipsAndFailsOnAFailure(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(recorded), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := summarize(dir, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a failed test did not fail the summary")
	}
	for _, want := range []string{
		"example/a", "FAIL example/a TestFail",
		"SKIP example/a TestParent/sub: Wine keeps no file ACLs",
		"SKIP example/a TestParent: all 1 of its subtests skipped",
		"0 (no result: the test binary ended early)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSummaryOfPassingRunsSucceeds(t *testing.T) {
	dir := t.TempDir()
	pass := `{"Action":"pass","Package":"example/c","Test":"TestC"}` + "\n" + `{"Action":"pass","Package":"example/c"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "c.jsonl"), []byte(pass), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if failed, err := summarize(dir, &out); err != nil || failed {
		t.Errorf("summary of a passing run: failed %v, %v\n%s", failed, err, out.String())
	}
}

func TestRecordKeepsLinesThatAreNoEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	var shown bytes.Buffer
	in := "# example/d\nbuild error\n" + `{"Action":"output","Package":"example/d","Test":"T","Output":"hello\n"}` + "\n"
	if err := record(strings.NewReader(in), &shown, path); err != nil {
		t.Fatal(err)
	}
	if shown.String() != "# example/d\nbuild error\nhello\n" {
		t.Errorf("shown %q", shown.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := parse(f); err != nil {
		t.Errorf("the recording does not parse back: %v", err)
	}
}

// A parent of parents whose subtests all skipped is skipped too.
func TestNestedAllSkippedParentsAreSkipped(t *testing.T) {
	in := `{"Action":"skip","Package":"p","Test":"TestA/b/c"}
{"Action":"pass","Package":"p","Test":"TestA/b"}
{"Action":"skip","Package":"p","Test":"TestA/d"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p"}
`
	pkgs, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if p := pkgs[0]; len(p.Passed) != 0 || len(p.Skips) != 4 {
		t.Errorf("passed %q, skipped %q; want all four skipped", p.Passed, p.Skips)
	}
}

func TestWindowsPackagesAreThoseWithAFileLinuxLacks(t *testing.T) {
	l := func(src, tests []string) listed { return listed{GoFiles: src, TestGoFiles: tests} }
	linux := map[string]listed{
		"p/shared":  l([]string{"a.go"}, []string{"a_test.go"}),
		"p/extra":   l([]string{"a.go"}, []string{"a_test.go"}),
		"p/fewer":   l([]string{"a.go"}, []string{"a_test.go", "b_others_test.go"}),
		"p/code":    l([]string{"a.go", "a_others.go"}, []string{"a_test.go"}),
		"p/notests": l([]string{"a.go", "a_others.go"}, nil),
	}
	windows := map[string]listed{
		"p/shared":  l([]string{"a.go"}, []string{"a_test.go"}),
		"p/extra":   l([]string{"a.go"}, []string{"a_test.go", "a_windows_test.go"}),
		"p/fewer":   l([]string{"a.go"}, []string{"a_test.go"}),
		"p/code":    l([]string{"a.go", "a_windows.go"}, []string{"a_test.go"}),
		"p/notests": l([]string{"a.go", "a_windows.go"}, nil),
		"p/only":    l(nil, []string{"svc_test.go"}),
		"p/none":    {},
	}
	run, untested := windowsOnly(linux, windows)
	if !reflect.DeepEqual(run, []string{"p/code", "p/extra", "p/only"}) || !reflect.DeepEqual(untested, []string{"p/notests"}) {
		t.Errorf("windowsOnly = %q and untested %q; want p/code, p/extra and p/only, and p/notests", run, untested)
	}
}

// A package with Windows code and no tests shows as such, and does not
// fail the run.
func TestSummaryShowsPackagesWithoutTests(t *testing.T) {
	dir := t.TempDir()
	if err := writeEvents(filepath.Join(dir, "n.jsonl"), event{Action: "skip", Package: "p/notests", Output: noTests}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := summarize(dir, &out)
	if err != nil || failed || !strings.Contains(out.String(), "p/notests") || !strings.Contains(out.String(), "Windows code, no tests") {
		t.Errorf("failed %v, %v:\n%s", failed, err, out.String())
	}
}

func TestIsLogStart(t *testing.T) {
	for s, want := range map[string]bool{
		"a_test.go:12: msg": true, "x.go:1: ": true, "a_test.go:: x": false, "see a.go:12: x": false, "plain text": false,
	} {
		if got := isLogStart(s); got != want {
			t.Errorf("isLogStart(%q) = %v", s, got)
		}
	}
}
