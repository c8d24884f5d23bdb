package service

import (
	"fmt"
	"strings"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// The service control manager stores one command line string per service
// and starts it with CreateProcess, so the executable and every argument
// must be joined into a string that the new process splits back into the
// same argv. Go's runtime on Windows splits the command line by the rules of
// CommandLineToArgvW, which this file follows:
//
//   - the first word (the program) ends at the first space or tab, or, if it
//     starts with a quote, at the next quote; backslashes are literal there;
//   - in the other words, 2n backslashes before a quote become n backslashes
//     and the quote opens or closes a quoted part; 2n+1 backslashes before a
//     quote become n backslashes and a literal quote; backslashes that are
//     not followed by a quote are literal;
//   - spaces and tabs outside a quoted part separate words.

// CommandLine joins exe and args into the command line the service manager
// starts. The executable is always quoted: an unquoted path with spaces,
// such as C:\Program Files\edgecore\edgecore.exe, would let Windows try
// C:\Program.exe first.
func CommandLine(exe string, args []string) (string, error) {
	if err := checkExecutable(exe); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(exe)
	b.WriteByte('"')
	for i, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return "", fmt.Errorf("service argument %d (%q) contains a NUL character, which a Windows command line cannot carry", i+1, a)
		}
		b.WriteByte(' ')
		b.WriteString(EscapeArg(a))
	}
	return b.String(), nil
}

// SplitCommandLine splits a service's command line (Status.CommandLine)
// back into the program and its arguments by the rules at the top of this
// file. It is the inverse of CommandLine, and its test holds it to that; an
// upgrade needs it to find the binary and the configuration the service
// really runs with, which may have spaces in their paths. It lives here so
// that the writer and the reader of the format change together.
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

// checkExecutable rejects program paths the first-word rule above cannot
// carry, and relative paths, which the service manager would resolve against
// C:\Windows\System32 rather than the directory the operator meant. The
// service exists only on Windows, so the path is judged by Windows' rules
// whatever OS runs the check.
func checkExecutable(exe string) error {
	switch {
	case exe == "":
		return fmt.Errorf("service executable path is empty; pass the absolute path of edgecore.exe")
	case strings.ContainsAny(exe, "\"\x00"):
		return fmt.Errorf("service executable path %q contains a quote or NUL character, which Windows file names cannot contain", exe)
	case strings.HasSuffix(exe, `\`) || strings.HasSuffix(exe, "/"):
		return fmt.Errorf("service executable path %q names a directory; pass the path of edgecore.exe itself", exe)
	case !ospath.IsAbs(ospath.Windows, exe):
		return fmt.Errorf("service executable path %q is not absolute; pass a full path such as C:\\Program Files\\edgecore\\edgecore.exe", exe)
	}
	return nil
}

// EscapeArg quotes one argument (not the program) so that CommandLineToArgvW
// returns it unchanged. Arguments without spaces, tabs or quotes are left
// as they are, so the common case stays readable in services.msc.
func EscapeArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\v\"") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
			continue
		case '"':
			// The backslashes before a quote are doubled and one more
			// makes the quote literal.
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
			b.WriteByte('"')
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
			b.WriteByte(c)
		}
		slashes = 0
	}
	// Trailing backslashes precede the closing quote, so they are doubled
	// too: "C:\dir\\" is C:\dir\, while "C:\dir\" would swallow the quote.
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}
