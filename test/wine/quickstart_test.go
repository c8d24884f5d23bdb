//go:build wine

package wine

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every edgecore.exe command line of the README's quick start must exist
// with the flags it shows: each is run with --help appended, which parses
// the command and its flags and stops before doing anything. (The commands
// themselves run for real in the other tests of this package.)
func TestQuickStartCommandsExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	begin, end := strings.Index(text, "<!-- quickstart -->"), strings.Index(text, "<!-- /quickstart -->")
	if begin < 0 || end < begin {
		t.Fatal("README.md has no quick start between <!-- quickstart --> markers")
	}
	placeholder := regexp.MustCompile(`<[^>]+>`)
	command := regexp.MustCompile("edgecore\\.exe ([a-z][^`\\n]*)")
	seen := map[string]bool{}
	for _, m := range command.FindAllStringSubmatch(text[begin:end], -1) {
		line := placeholder.ReplaceAllString(strings.TrimSpace(m[1]), "x")
		args := strings.Fields(line)
		seen[args[0]] = true
		r := run(t, time.Minute, append(args, "--help")...)
		if r.code != 0 || strings.Contains(r.stderr, "unknown") {
			t.Errorf("edgecore.exe %s: exit %d\n%s", line, r.code, r.stderr)
		}
	}
	for _, want := range []string{"cni-config", "preflight", "join", "reset"} {
		if !seen[want] {
			t.Errorf("the quick start no longer shows edgecore.exe %s", want)
		}
	}
}
