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
//
// On Windows the result is also the one spelling of its place, one that
// Windows opens as written, so that the path edgecore writes, checks and
// opens is the same string (a configuration is rewritten to it on load):
//   - device-path prefixes go: \\?\C:\x, \\.\C:\x and \??\C:\x are C:\x,
//     and \\?\UNC\server\share\x is \\server\share\x; any other device
//     path (\\?\Volume{...}, \\.\pipe\x) is written \\.\ and kept, for
//     BadName to refuse where a file is meant;
//   - the trailing dots and spaces of every name go. Win32 drops those of
//     the last name and the trailing dot of any name (C:\Windows.\x is
//     C:\Windows\x); a folder that keeps them (C:\Windows \x, made
//     through \\?\) is a look-alike that people and tools take for the
//     real one, so it is compared, and used, as the real one. A name of
//     dots and spaces only, other than . and .., is kept as written: what
//     Windows makes of it depends on where it stands, and BadName refuses
//     it.
//
// 8.3 short names and alternate data streams cannot be written another
// way without the disk; BadName refuses them.
func Clean(goos, p string) string {
	if goos != Windows {
		return path.Clean(p)
	}
	if p == "" {
		return "."
	}
	s, _ := undevice(strings.ReplaceAll(p, "/", `\`))
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
			if t := strings.TrimRight(name, ". "); t != "" {
				name = t
			}
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

// undevice rewrites a Win32 device path (\\?\, \\.\ or \??\ and what
// follows; s has backslashes only) as the path it names when that is a
// drive or UNC path, and otherwise spells it \\.\ and reports it as a
// device. Other paths are returned as they are. \\?\ only tells Win32 not
// to normalise the rest, and \??\ is the NT name Win32 passes through;
// both reach the same file as the path without them.
func undevice(s string) (string, bool) {
	if len(s) < 4 || !(strings.HasPrefix(s, `\\?\`) || strings.HasPrefix(s, `\\.\`) || strings.HasPrefix(s, `\??\`)) {
		return s, false
	}
	rest := s[4:]
	switch {
	case isDrive(rest) && len(rest) > 2 && rest[2] == '\\':
		return rest, false
	case len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`):
		return `\\` + rest[4:], false
	}
	return `\\.\` + rest, true
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

// Base returns the last name of p, "" for a volume or a root.
func Base(goos, p string) string {
	vol := volumeLen(goos, p)
	end := len(p)
	for end > vol && IsSeparator(goos, p[end-1]) {
		end--
	}
	i := end
	for i > vol && !IsSeparator(goos, p[i-1]) {
		i--
	}
	return p[i:end]
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

// Key is the form in which goos compares paths: Clean's, and on Windows
// in upper case, as NTFS compares names (it upper-cases each character
// through a table that strings.ToUpper follows closely; case folding
// would also make the Kelvin sign equal k, which NTFS does not). Same and
// Within compare keys; a map of paths should be keyed by Key.
func Key(goos, p string) string {
	c := Clean(goos, p)
	if goos == Windows {
		return strings.ToUpper(c)
	}
	return c
}

// Same reports whether a and b name the same file as goos compares names:
// after Clean, and on Windows without regard to case, to which slash
// separates the names, to device-path prefixes or to trailing dots and
// spaces (see Clean).
func Same(goos, a, b string) bool {
	return Key(goos, a) == Key(goos, b)
}

// AppendNew appends p to list unless list already names the same file
// (Same), keeping the first spelling.
func AppendNew(goos string, list []string, p string) []string {
	for _, have := range list {
		if Same(goos, have, p) {
			return list
		}
	}
	return append(list, p)
}

// Within reports whether p is dir or a path below it, comparing as Same
// does. Both are cleaned first, so C:\etc\kubeedge\..\x is not within
// C:\etc\kubeedge and C:\etc\kubeedge-old is not either, while
// \\?\C:\etc\kubeedge.\x is.
func Within(goos, dir, p string) bool {
	dir, p = Key(goos, dir), Key(goos, p)
	if dir == p {
		return true
	}
	prefix := dir
	if sep := Separator(goos); !strings.HasSuffix(prefix, sep) {
		prefix += sep
	}
	return len(p) > len(prefix) && strings.HasPrefix(p, prefix)
}

// reservedNames are the device names Windows resolves in every directory:
// C:\data\NUL, and on Windows Server (like every release before Windows
// 11) also C:\data\NUL.txt, is the null device, not a file. Windows
// reserves COM and LPT with 0 and the superscripts ¹ ² ³ as well, and
// CONIN$ and CONOUT$ open the console.
var reservedNames = []string{"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
	"COM0", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "COM¹", "COM²", "COM³",
	"LPT0", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "LPT¹", "LPT²", "LPT³"}

// BadName returns the first name of p that goos cannot store as a file or
// directory, or that does not name one folder whatever the disk holds,
// with why and the fix ("" when the fix is to choose another name). The
// rules that compare paths (Same, Within) see names only as written, so a
// path refused here is one they could misjudge: a configuration field
// refuses it, and so does any check that decides from the text alone.
//
// On Windows that is:
//   - a device path that is not a drive or UNC path (\\.\PhysicalDrive0,
//     \\.\pipe\x, \\?\Volume{...}\x): a device, not a folder of a drive;
//   - a name holding < > : " | ? * or a control character; a colon after
//     the volume names an alternate data stream (x:s is the stream s of
//     x, and x::$INDEX_ALLOCATION is the folder x itself);
//   - a device name such as NUL or COM1, with or without an extension and
//     trailing spaces;
//   - a name with the shape of an 8.3 short name (PROGRA~1): only the disk
//     knows which long name it stands for, so C:\WINDOW~1 may be
//     C:\Windows;
//   - a name of dots and spaces only, other than . and ..: Win32 trims
//     trailing dots and spaces, which leaves nothing of it.
//
// Elsewhere only NUL is refused. . and .. are left to Clean.
func BadName(goos, p string) (name, why, fix string) {
	if goos == Windows {
		var dev bool
		if p, dev = undevice(strings.ReplaceAll(p, "/", `\`)); dev {
			name = p
			if i := strings.IndexByte(p[4:], '\\'); i >= 0 {
				name = p[:4+i]
			}
			return name, "it is a device path, which names a device (a disk, a volume, a pipe), not a folder of a drive",
				`write the path from its drive letter (C:\...) or its share (\\server\share\...)`
		}
	}
	vol := volumeLen(goos, p)
	for _, n := range strings.FieldsFunc(p[vol:], func(r rune) bool { return r < 0x80 && IsSeparator(goos, byte(r)) }) {
		if goos != Windows {
			if strings.IndexByte(n, 0) >= 0 {
				return n, "it holds a NUL character", ""
			}
			continue
		}
		if why, fix := badWindowsName(n); why != "" {
			return n, why, fix
		}
	}
	return "", "", ""
}

// badWindowsName is BadName's judgement of one Windows name.
func badWindowsName(n string) (why, fix string) {
	for _, r := range n {
		switch {
		case r < 0x20:
			return fmt.Sprintf("it holds the control character %U", r), ""
		case r == ':':
			file, stream, _ := strings.Cut(n, ":")
			return fmt.Sprintf("Windows does not allow ':' in a file or directory name: after the drive a colon names "+
				"an alternate data stream (%q is the stream %q of %q), not a file or directory", n, stream, file), ""
		case strings.ContainsRune(`<>"|?*`, r):
			return fmt.Sprintf("Windows does not allow %q in a file or directory name", r), ""
		}
	}
	if n != "." && n != ".." && strings.Trim(n, ". ") == "" {
		return "Windows trims the dots and spaces that end a name, which leaves nothing of this one, " +
			"so which folder it names depends on where it stands", ""
	}
	base := strings.TrimRight(n, " ")
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	for _, r := range reservedNames {
		if strings.EqualFold(base, r) {
			return fmt.Sprintf("%s is a device name on Windows, not a file", r), ""
		}
	}
	if looksShort(n) {
		return "it has the shape of an 8.3 short name, like PROGRA~1 for Program Files, which only the disk can expand, " +
				"so edgecore cannot tell which folder it is",
			"write the long name of every folder; `dir /x` in the folder above lists the long name next to the short one"
	}
	return "", ""
}

// looksShort reports whether n has the shape of an 8.3 short name as
// Windows generates them: a base of at most eight characters ending in ~
// and a number, and an extension of at most three. A long name of that
// shape cannot be told from a short one without the disk either.
func looksShort(n string) bool {
	base, ext, _ := strings.Cut(n, ".")
	if len(base) > 8 || len(ext) > 3 || strings.Contains(ext, ".") {
		return false
	}
	i := strings.LastIndexByte(base, '~')
	if i < 0 || i == len(base)-1 {
		return false
	}
	for _, c := range base[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
