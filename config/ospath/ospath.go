// Package ospath holds the path rules of a target operating system given as
// data: goos "windows" means Windows paths, anything else POSIX paths.
// path/filepath answers for the OS the binary runs on and path answers for
// POSIX only, so neither can tell, on a Linux build host, whether
// "C:/etc/kubeedge" is absolute on Windows; the tests of every Windows rule
// run on Linux. The package imports only the standard library so that
// small packages (the service, the log file) can use it without the
// configuration's dependencies.
//
// On Windows both \ and / separate names, a path may start with a volume
// (a drive "C:" or a UNC share "\\server\share"), and names compare
// without regard to case.
package ospath

import (
	"fmt"
	"path"
	"strings"
)

// Windows is runtime.GOOS on Windows; every other value means POSIX.
const Windows = "windows"

// Separator is the separator goos writes paths with.
func Separator(goos string) string {
	if goos == Windows {
		return `\`
	}
	return "/"
}

// IsSeparator reports whether c separates names on goos: Windows accepts
// both slashes.
func IsSeparator(goos string, c byte) bool {
	return c == '/' || (goos == Windows && c == '\\')
}

// IsAbs reports whether p names the same file whatever the current
// directory is. On Windows that is a drive letter followed by a separator
// (C:\x, c:/x) or a UNC path with server and share (\\server\share\x);
// "\x" is relative to the current drive and "C:x" to the current directory
// of drive C, so a service, which starts in C:\Windows\System32, would
// resolve both somewhere else than the operator meant. On POSIX it is a
// path from /.
func IsAbs(goos, p string) bool {
	if goos != Windows {
		return strings.HasPrefix(p, "/")
	}
	if isDrive(p) {
		return len(p) > 2 && IsSeparator(goos, p[2])
	}
	_, complete := uncVolume(p)
	return complete
}

// isDrive reports whether p starts with a drive letter and a colon.
func isDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z'
}

// uncVolume returns the length of the \\server\share prefix of a Windows
// path (or of \\server when the share is missing) and whether both names
// are there. A path that does not start with two separators and a server
// name has no UNC volume.
func uncVolume(p string) (n int, complete bool) {
	if len(p) < 3 || !IsSeparator(Windows, p[0]) || !IsSeparator(Windows, p[1]) || IsSeparator(Windows, p[2]) {
		return 0, false
	}
	server := 2
	for server < len(p) && !IsSeparator(Windows, p[server]) {
		server++
	}
	if server+1 >= len(p) || IsSeparator(Windows, p[server+1]) {
		return server, false
	}
	share := server + 1
	for share < len(p) && !IsSeparator(Windows, p[share]) {
		share++
	}
	return share, true
}

// volumeLen is the length of p's volume: "C:", \\server\share, or 0.
func volumeLen(goos, p string) int {
	if goos != Windows {
		return 0
	}
	if isDrive(p) {
		return 2
	}
	n, _ := uncVolume(p)
	return n
}

// Clean returns the shortest path naming the same file as p, lexically:
// runs of separators collapse, "." goes, ".." removes the name before it
// (and stays at the root), and a trailing separator goes. On Windows the
// result is written the canonical way, as edgecore writes every path:
// backslashes and an upper-case drive letter; the root of a drive keeps
// its separator (C:\, since "C:" is the current directory of drive C), a
// UNC share root does not (\\server\share). An empty path is ".".
func Clean(goos, p string) string {
	if goos != Windows {
		return path.Clean(p)
	}
	if p == "" {
		return "."
	}
	s := strings.ReplaceAll(p, "/", `\`)
	n := volumeLen(goos, s)
	vol, rest := s[:n], s[n:]
	if n == 2 {
		vol = strings.ToUpper(vol[:1]) + ":"
	}
	rooted := strings.HasPrefix(rest, `\`)
	var names []string
	for _, name := range strings.Split(rest, `\`) {
		switch {
		case name == "" || name == ".":
		case name != "..":
			names = append(names, name)
		case len(names) > 0 && names[len(names)-1] != "..":
			names = names[:len(names)-1]
		case !rooted:
			names = append(names, "..")
		}
	}
	body := strings.Join(names, `\`)
	switch {
	case n > 2 && body == "":
		return vol
	case rooted:
		return vol + `\` + body
	case vol == "" && body == "":
		return "."
	}
	return vol + body
}

// Join puts the non-empty elements together with goos' separator and cleans
// the result. On Windows a first element that is a bare drive ("C:", as
// %SystemDrive% holds it) is taken as that drive's root, which is what
// joining a location under the system drive means; path/filepath would
// give the drive-relative "C:etc".
func Join(goos string, elem ...string) string {
	var parts []string
	for _, e := range elem {
		if e != "" {
			parts = append(parts, e)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return Clean(goos, strings.Join(parts, Separator(goos)))
}

// Dir returns all of p but its last name, without the separators before
// that name, keeping separators as p writes them: the directory of a file
// named in a configuration, whichever OS the binary runs on. The parent of
// a name at a root is that root (C:\, \\server\share, /); a volume or a
// root is its own parent, and a name without any directory has ".".
func Dir(goos, p string) string {
	vol := volumeLen(goos, p)
	i := len(p) - 1
	for i >= vol && !IsSeparator(goos, p[i]) {
		i--
	}
	if i < vol {
		// No separator after the volume: "x", "C:x", \\server\share.
		if vol == 0 {
			return "."
		}
		return p[:vol]
	}
	j := i
	for j > vol && IsSeparator(goos, p[j-1]) {
		j--
	}
	if j > vol {
		return p[:j]
	}
	// The parent is the root.
	if vol > 2 {
		return p[:vol] // \\server\share, written without a trailing separator
	}
	return p[:vol+1] // "/", `\`, `C:\`
}

// Ancestors returns p and the directories above it up to its root, p
// first, as Dir gives them.
func Ancestors(goos, p string) []string {
	var out []string
	for {
		out = append(out, p)
		parent := Dir(goos, p)
		if parent == p || parent == "." {
			return out
		}
		p = parent
	}
}

// Same reports whether a and b name the same file as goos compares names:
// after Clean, and on Windows without regard to case or to which slash
// separates the names.
func Same(goos, a, b string) bool {
	a, b = Clean(goos, a), Clean(goos, b)
	if goos == Windows {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// Within reports whether p is dir or a path below it, comparing as Same
// does. Both are cleaned first, so C:\etc\kubeedge\..\x is not within
// C:\etc\kubeedge and C:\etc\kubeedge-old is not either.
func Within(goos, dir, p string) bool {
	if Same(goos, dir, p) {
		return true
	}
	dir, p = Clean(goos, dir), Clean(goos, p)
	sep := Separator(goos)
	prefix := dir
	if !strings.HasSuffix(prefix, sep) {
		prefix += sep
	}
	if len(p) <= len(prefix) {
		return false
	}
	if goos == Windows {
		return strings.EqualFold(p[:len(prefix)], prefix)
	}
	return p[:len(prefix)] == prefix
}

// reservedNames are the device names Windows resolves in every directory:
// C:\data\NUL, and on Windows Server (like every release before Windows
// 11) also C:\data\NUL.txt, is the null device, not a file.
var reservedNames = []string{"CON", "PRN", "AUX", "NUL",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}

// BadName returns the first name of p that goos cannot store as a file or
// directory, and why; "" when there is none. On Windows a name may not
// hold < > : " | ? * or a control character (the volume's drive colon
// is not part of a name), nor be a device name such as NUL or COM1, with
// or without an extension and trailing spaces. Elsewhere only NUL is
// refused. . and .. are left to Clean.
func BadName(goos, p string) (name, why string) {
	vol := volumeLen(goos, p)
	for _, n := range strings.FieldsFunc(p[vol:], func(r rune) bool { return r < 0x80 && IsSeparator(goos, byte(r)) }) {
		if goos != Windows {
			if strings.IndexByte(n, 0) >= 0 {
				return n, "it holds a NUL character"
			}
			continue
		}
		for _, r := range n {
			switch {
			case r < 0x20:
				return n, fmt.Sprintf("it holds the control character %U", r)
			case strings.ContainsRune(`<>:"|?*`, r):
				return n, fmt.Sprintf("Windows does not allow %q in a file or directory name", r)
			}
		}
		base := strings.TrimRight(n, " ")
		if i := strings.IndexByte(base, '.'); i >= 0 {
			base = base[:i]
		}
		base = strings.TrimRight(base, " ")
		for _, r := range reservedNames {
			if strings.EqualFold(base, r) {
				return n, fmt.Sprintf("%s is a device name on Windows, not a file", r)
			}
		}
	}
	return "", ""
}
