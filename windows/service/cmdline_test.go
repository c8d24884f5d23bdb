package service

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// splitCommandLine splits a command line the way CommandLineToArgvW (and
// Go's runtime on Windows) does, written from the documented rules rather
// than from EscapeArg, so that a round trip through it checks EscapeArg.
func splitCommandLine(cmd string) []string {
	var args []string
	i := 0
	// The program name: up to the next quote if quoted, else up to
	// white space; backslashes are literal.
	var prog strings.Builder
	if i < len(cmd) && cmd[i] == '"' {
		i++
		for i < len(cmd) && cmd[i] != '"' {
			prog.WriteByte(cmd[i])
			i++
		}
		i++ // closing quote
	} else {
		for i < len(cmd) && cmd[i] != ' ' && cmd[i] != '\t' {
			prog.WriteByte(cmd[i])
			i++
		}
	}
	args = append(args, prog.String())

	for {
		for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t') {
			i++
		}
		if i >= len(cmd) {
			return args
		}
		var arg strings.Builder
		quoted := false
		for i < len(cmd) {
			c := cmd[i]
			if !quoted && (c == ' ' || c == '\t') {
				break
			}
			if c == '\\' {
				n := 0
				for i < len(cmd) && cmd[i] == '\\' {
					n++
					i++
				}
				if i < len(cmd) && cmd[i] == '"' {
					arg.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						arg.WriteByte('"')
						i++
					}
					// An even count leaves the quote to toggle below.
				} else {
					arg.WriteString(strings.Repeat(`\`, n))
				}
				continue
			}
			if c == '"' {
				// "" inside a quoted part is a literal quote.
				if quoted && i+1 < len(cmd) && cmd[i+1] == '"' {
					arg.WriteByte('"')
					i += 2
					continue
				}
				quoted = !quoted
				i++
				continue
			}
			arg.WriteByte(c)
			i++
		}
		args = append(args, arg.String())
	}
}

func TestSplitCommandLineFollowsTheDocumentedExamples(t *testing.T) {
	// The parser the round trips rely on must itself be right: these are
	// the examples of Microsoft's "Parsing C++ command-line arguments".
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`p "a b c" d e`, []string{"p", "a b c", "d", "e"}},
		{`p "ab\"c" "\\" d`, []string{"p", `ab"c`, `\`, "d"}},
		{`p a\\\b d"e f"g h`, []string{"p", `a\\\b`, "de fg", "h"}},
		{`p a\\\"b c d`, []string{"p", `a\"b`, "c", "d"}},
		{`p a\\\\"b c" d e`, []string{"p", `a\\b c`, "d", "e"}},
		{`"C:\Program Files\x.exe" --a`, []string{`C:\Program Files\x.exe`, "--a"}},
	} {
		if got := splitCommandLine(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitCommandLine(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEscapeArg(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`--config`, `--config`},
		{`C:\etc\kubeedge\config\edgecore.yaml`, `C:\etc\kubeedge\config\edgecore.yaml`},
		{`C:\etc\kube edge\edgecore.yaml`, `"C:\etc\kube edge\edgecore.yaml"`},
		{``, `""`},
		{`a b`, `"a b"`},
		{"a\tb", "\"a\tb\""},
		{`say "hi"`, `"say \"hi\""`},
		{`a"b`, `"a\"b"`},
		// A backslash before a quote is doubled, plus one for the quote.
		{`a\"b`, `"a\\\"b"`},
		// A trailing backslash is doubled so it does not escape the
		// closing quote.
		{`C:\kube edge\`, `"C:\kube edge\\"`},
		{`C:\kube edge\\`, `"C:\kube edge\\\\"`},
		// Backslashes not followed by a quote stay single.
		{`C:\a b\c`, `"C:\a b\c"`},
		{`\\server\share\edge core`, `"\\server\share\edge core"`},
	} {
		if got := EscapeArg(tc.in); got != tc.want {
			t.Errorf("EscapeArg(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCommandLineQuotesPathsWithSpaces(t *testing.T) {
	got, err := CommandLine(`C:\Program Files\edgecore\edgecore.exe`, []string{"--config", `C:\etc\kube edge\edgecore.yaml`})
	if err != nil {
		t.Fatal(err)
	}
	want := `"C:\Program Files\edgecore\edgecore.exe" --config "C:\etc\kube edge\edgecore.yaml"`
	if got != want {
		t.Errorf("CommandLine = %s\nwant           %s", got, want)
	}
}

func TestCommandLineAlwaysQuotesTheExecutable(t *testing.T) {
	// Unquoted, a path with spaces lets Windows try C:\Program.exe first;
	// quoting every path keeps that from depending on where it lives.
	got, err := CommandLine(`C:\edgecore\edgecore.exe`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"C:\edgecore\edgecore.exe"`; got != want {
		t.Errorf("CommandLine = %s, want %s", got, want)
	}
}

func TestCommandLineRoundTrips(t *testing.T) {
	exe := `C:\Program Files\edge core\edgecore.exe`
	cases := [][]string{
		{"--config", `C:\etc\kube edge\edgecore.yaml`},
		{"--config", `C:\trailing slash dir\`},
		{`--set`, `modules.edged.hostnameOverride="node 1"`},
		{``, `""`, `\`, `\\`, `"`, `\"`, `a\\"b`, "tab\there", `end\`},
		{`--labels`, `a=b,c=d`, `-t`, `abc.def`},
	}
	// Random arguments over the characters the rules treat specially.
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte{'a', ' ', '\t', '\\', '"', 'Z', ':'}
	for n := 0; n < 2000; n++ {
		args := make([]string, 1+rng.Intn(4))
		for i := range args {
			b := make([]byte, rng.Intn(8))
			for j := range b {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			}
			args[i] = string(b)
		}
		cases = append(cases, args)
	}
	for _, args := range cases {
		line, err := CommandLine(exe, args)
		if err != nil {
			t.Fatalf("CommandLine(%q): %v", args, err)
		}
		got := splitCommandLine(line)
		want := append([]string{exe}, args...)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %q through %s gave %q", want, line, got)
		}
		// The reader an upgrade uses must undo the writer as the
		// documented rules do.
		if got, err := SplitCommandLine(line); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("SplitCommandLine(%s) = %q, %v, want %q", line, got, err, want)
		}
	}
}

func TestSplitCommandLineUndoesCommandLine(t *testing.T) {
	for _, args := range [][]string{
		{"--config", `C:\etc\kubeedge\config\edgecore.yaml`},
		{"--config", `C:\Program Files\edge core\my config.yaml`},
		{"--config", `C:\dir with trailing slash\`},
		{`a"b`, `c\"d`, `\\server\share\x y`, "", "tab\there", `x\\`, `"quoted"`},
	} {
		line, err := CommandLine(`C:\Program Files\edge core\edgecore.exe`, args)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SplitCommandLine(line)
		want := append([]string{`C:\Program Files\edge core\edgecore.exe`}, args...)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitCommandLine(%s)\n got %q, %v\nwant %q", line, got, err, want)
		}
	}
	if got, _ := SplitCommandLine(`C:\edgecore\edgecore.exe --config C:\x.yaml`); !reflect.DeepEqual(got, []string{`C:\edgecore\edgecore.exe`, "--config", `C:\x.yaml`}) {
		t.Errorf("unquoted program: %q", got)
	}
	if _, err := SplitCommandLine(`"C:\Program Files\edgecore.exe --config x`); err == nil {
		t.Error("an unclosed quote was accepted")
	}
}

func TestCommandLineRefusesExecutablesItCannotCarry(t *testing.T) {
	for _, tc := range []struct{ exe, wantInErr string }{
		{``, "empty"},
		{`edgecore.exe`, "not absolute"},
		{`.\edgecore.exe`, "not absolute"},
		{`\edgecore\edgecore.exe`, "not absolute"},
		{`C:edgecore.exe`, "not absolute"},
		{`C:\edge"core\edgecore.exe`, "quote"},
		{`C:\edgecore\`, "directory"},
		{`\\server`, "not absolute"},
	} {
		_, err := CommandLine(tc.exe, nil)
		if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
			t.Errorf("CommandLine(%q) error = %v, want one mentioning %q", tc.exe, err, tc.wantInErr)
		}
	}
	for _, ok := range []string{`C:\edgecore.exe`, `d:/edge/edgecore.exe`, `\\server\share\edgecore.exe`} {
		if _, err := CommandLine(ok, nil); err != nil {
			t.Errorf("CommandLine(%q): %v", ok, err)
		}
	}
}

func TestCommandLineRefusesNULInArguments(t *testing.T) {
	_, err := CommandLine(`C:\edgecore.exe`, []string{"--config", "a\x00b"})
	if err == nil || !strings.Contains(err.Error(), "argument 2") {
		t.Errorf("error = %v, want one naming argument 2", err)
	}
}
