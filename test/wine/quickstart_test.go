//go:build wine

package wine

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/test/quickstart"
)

// Every edgecore.exe command line of the quick start (docs/quickstart.md) must exist
// with the flags it shows: each is run with --help appended, which parses
// the command and its flags and stops before doing anything. (The commands
// themselves run for real in the other tests of this package.)
func TestQuickStartCommandsExist(t *testing.T) {
	commands, err := quickstart.Commands("../../docs/quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`<[^>]+>`)
	seen := map[string]bool{}
	for _, c := range commands {
		line := placeholder.ReplaceAllString(c, "x")
		args := strings.Fields(line)
		seen[args[0]] = true
		r := run(t, time.Minute, append(args, "--help")...)
		if r.code != 0 || strings.Contains(r.stderr, "unknown") {
			t.Errorf("edgecore.exe %s: exit %d\n%s", line, r.code, r.stderr)
		}
	}
	for _, want := range []string{"preflight", "join", "service", "reset"} {
		if !seen[want] {
			t.Errorf("the quick start no longer shows edgecore.exe %s", want)
		}
	}
}
