package upgrade

import (
	"fmt"
	"strings"
)

// SplitCommandLine splits a service's command line (service.Status
// CommandLine) back into the program and its arguments, by the rules
// CommandLineToArgvW applies and windows/service's CommandLine writes for
// (see the comment in windows/service/cmdline.go): the program ends at
// its closing quote, or at the first space when unquoted, with
// backslashes literal; in the arguments 2n backslashes before a quote are
// n backslashes and the quote opens or closes a quoted part, 2n+1 are n
// and a literal quote. It is the inverse of service.CommandLine, and its
// test holds it to that; an upgrade needs it to find the binary and the
// configuration the service really runs with, which may have spaces in
// their paths.
func SplitCommandLine(line string) ([]string, error) {
	line = strings.TrimLeft(line, " \t")
	if line == "" {
		return nil, fmt.Errorf("the service's command line is empty")
	}
	var argv []string
	var prog string
	if line[0] == '"' {
		end := strings.IndexByte(line[1:], '"')
		if end < 0 {
			return nil, fmt.Errorf("the service's command line %q opens a quote it does not close", line)
		}
		prog, line = line[1:1+end], line[2+end:]
	} else {
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		prog, line = line[:end], line[end:]
	}
	argv = append(argv, prog)
	var (
		b       strings.Builder
		inWord  bool
		quoted  bool
		slashes int
	)
	flush := func() {
		b.WriteString(strings.Repeat(`\`, slashes))
		slashes = 0
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\':
			slashes++
			inWord = true
		case c == '"':
			b.WriteString(strings.Repeat(`\`, slashes/2))
			if slashes%2 == 1 {
				b.WriteByte('"')
			} else {
				quoted = !quoted
			}
			slashes = 0
			inWord = true
		case (c == ' ' || c == '\t') && !quoted:
			flush()
			if inWord {
				argv = append(argv, b.String())
				b.Reset()
				inWord = false
			}
		default:
			flush()
			b.WriteByte(c)
			inWord = true
		}
	}
	flush()
	if inWord {
		argv = append(argv, b.String())
	}
	return argv, nil
}

// configFlag finds the value of --config in a service's arguments.
func configFlag(args []string) (string, bool) {
	for i, a := range args {
		switch {
		case a == "--config" && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, "--config="):
			return strings.TrimPrefix(a, "--config="), true
		}
	}
	return "", false
}
