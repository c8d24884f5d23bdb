package version

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
)

// Program is which edgecore a file is.
type Program string

const (
	// ProgramThis is a build of this project (cmd/edgecore).
	ProgramThis Program = "edgecore for Windows"
	// ProgramUpstream is upstream KubeEdge's edgecore main
	// (edge/cmd/edgecore), as upstream's release and keadm install it.
	ProgramUpstream Program = "upstream's KubeEdge edgecore"
)

// Main packages of the two programs, as Go records them in the binary.
const (
	thisMain     = "github.com/kubeedge-windows/edgecore/cmd/edgecore"
	upstreamMain = "github.com/kubeedge/kubeedge/edge/cmd/edgecore"
)

// The variables the builds stamp with -ldflags -X: this project's
// Makefile, and upstream's hack/lib/golang.sh (kubeedge::version::ldflags).
const (
	thisVersionVar     = "github.com/kubeedge-windows/edgecore/internal/version.version"
	upstreamVersionVar = kubeedgeModule + "/pkg/version.gitVersion"
)

// Where a Stamp's version was read.
const (
	FromLdflags  = "-ldflags"
	FromResource = "the Windows version resource"
	FromModules  = "the module versions Go recorded"
)

// Stamp is what a program file says about its own build, read from the
// file and never by running it: whoever may change a binary of a host we
// are about to take over chooses what running it does, and upstream's
// edgecore has no version command (it would start a second node on the
// live database).
type Stamp struct {
	Program Program
	// Version is this release line's version for ProgramThis, upstream's
	// KubeEdge version (its gitVersion) for ProgramUpstream; "" when the
	// file records none.
	Version string
	// From says where Version was read (FromLdflags, FromResource,
	// FromModules).
	From string
	// KubeEdge is the KubeEdge release the program is built from, ""
	// when unknown.
	KubeEdge string
}

func (s Stamp) String() string {
	v := s.Version
	if v == "" {
		v = "(no version recorded)"
	}
	return fmt.Sprintf("%s %s", s.Program, v)
}

// OfFile reads which edgecore the program file at path is and its version,
// without running it. The main package Go records in every binary says
// which program it is. The version comes from, in order: the -ldflags
// the build recorded (a build without -trimpath, as upstream's release
// is built, records them), the Windows version resource (ProductVersion,
// which this project's Makefile writes), and for upstream's edgecore the
// KubeEdge module version the build used.
func OfFile(path string) (Stamp, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return Stamp{}, fmt.Errorf("%s is not a Go program this command can read (%v): it is no edgecore build", path, err)
	}
	x := ldflagsVars(setting(bi, "-ldflags"))
	var s Stamp
	switch bi.Path {
	case thisMain:
		s.Program = ProgramThis
		s.KubeEdge = x[upstreamVersionVar]
		if s.KubeEdge == "" {
			s.KubeEdge = depVersion(bi, kubeedgeModule)
		}
		if v := x[thisVersionVar]; v != "" {
			s.Version, s.From = v, FromLdflags
			break
		}
		res, rerr := readVersionResource(path)
		if rerr != nil {
			return s, fmt.Errorf("%s: %w", path, rerr)
		}
		if res.ProductName != string(ProgramThis) {
			return s, fmt.Errorf("%s: its version resource names the product %q, not %q", path, res.ProductName, ProgramThis)
		}
		v, ok := resourceVersion(res.ProductVersion)
		if !ok {
			return s, fmt.Errorf("%s: its version resource gives the product version %q, which is no version of this release line", path, res.ProductVersion)
		}
		s.Version, s.From = v, FromResource
	case upstreamMain:
		s.Program = ProgramUpstream
		if v := x[upstreamVersionVar]; v != "" {
			s.Version, s.From = v, FromLdflags
		} else if v := depVersion(bi, kubeedgeModule); v != "" {
			s.Version, s.From = v, FromModules
		}
		s.KubeEdge = s.Version
	default:
		return Stamp{}, fmt.Errorf("%s is the Go program %s, not an edgecore (%s or %s)", path, bi.Path, thisMain, upstreamMain)
	}
	return s, nil
}

func setting(bi *buildinfo.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// depVersion is the version a module was required at: the module of the
// main package too, which Go records as Main when the build is of
// another module's package (a replaced module keeps the version it
// replaces). "" for a build in the module's own tree ("(devel)") or
// when the binary has no such module.
func depVersion(bi *buildinfo.BuildInfo, path string) string {
	for _, d := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		if d.Path == path && d.Version != "" && d.Version != "(devel)" {
			return d.Version
		}
	}
	return ""
}

// ldflagsVars are the -X name=value settings of an -ldflags value as Go
// records it: words split at spaces, a word may be quoted with ' or "
// (cmd/go quotes a word with spaces in it).
func ldflagsVars(ldflags string) map[string]string {
	words := splitQuoted(ldflags)
	out := map[string]string{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		var def string
		switch {
		case w == "-X" || w == "--X":
			if i+1 >= len(words) {
				continue
			}
			i++
			def = words[i]
		case strings.HasPrefix(w, "-X="):
			def = w[len("-X="):]
		case strings.HasPrefix(w, "--X="):
			def = w[len("--X="):]
		default:
			continue
		}
		if name, value, ok := strings.Cut(def, "="); ok {
			out[name] = value
		}
	}
	return out
}

func splitQuoted(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// releaseVersion is a version of this release line: v, three numbers, an
// optional pre-release.
var releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// legacyResource is the product version releases up to v0.2.0 wrote into
// the version resource: the numbers only, and a fourth that is 0.
var legacyResource = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)\.0$`)

// resourceVersion reads the version resource's ProductVersion string.
func resourceVersion(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if releaseVersion.MatchString(s) {
		return s, true
	}
	if m := legacyResource.FindStringSubmatch(s); m != nil {
		for _, n := range m[1:4] {
			if _, err := strconv.ParseUint(n, 10, 16); err != nil {
				return "", false
			}
		}
		return "v" + m[1] + "." + m[2] + "." + m[3], true
	}
	return "", false
}

// errNoResource is a file without a version resource.
var errNoResource = errors.New("it carries no Windows version resource, so its version is unknown")
