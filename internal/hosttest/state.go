package hosttest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// State is what an operator would check of the host after a command: its
// files with their contents, the services installed with their command
// lines, which run, and the folders restricted. The crash-at-every-step
// matrix compares the host after a crash and the next command with the
// host before and after the whole procedure.
type State struct {
	// Files are the files with their contents; Dirs the directories.
	Files    map[string]string
	Dirs     map[string]bool
	Services map[string]string
	ACL      map[string]bool
	// HNS are the HNS networks and endpoints by name, with their
	// settings.
	HNS map[string]string
}

// State is the host as it is now.
func (w *World) State() State {
	s := State{Files: map[string]string{}, Dirs: map[string]bool{}, Services: map[string]string{}, ACL: map[string]bool{}, HNS: map[string]string{}}
	for _, p := range w.FS.Paths() {
		if st, err := w.FS.Lstat(p); err == nil && st.IsDir() {
			s.Dirs[p] = true
			continue
		}
		s.Files[p] = w.FS.Content(p)
	}
	for name, c := range w.Services.Configs {
		s.Services[name] = fmt.Sprintf("%s %v start=%v running=%v", c.Executable, c.Args, c.StartType, w.Services.Running[name])
	}
	for _, d := range w.ACL {
		s.ACL[d] = true
	}
	if w.HNS != nil {
		for name, n := range w.HNS.Networks {
			s.HNS["network "+name] = fmt.Sprintf("%+v", *n)
		}
		for name, e := range w.HNS.Endpoints {
			s.HNS["endpoint "+name] = fmt.Sprintf("%+v", *e)
		}
	}
	return s
}

// Compare says what Diff leaves out.
type Compare struct {
	// Presence are files compared by presence only (the log, which
	// each command appends to).
	Presence []string
	// Files only: directories, restrictions (World.ACL records the
	// calls, not what a folder's ACL is now) and the HNS are left out.
	FilesOnly bool
}

// Diff lists how b differs from a, one line each; none when they are the
// same.
func (a State) Diff(b State, c Compare) []string {
	skip := map[string]bool{}
	for _, p := range c.Presence {
		skip[p] = true
	}
	var out []string
	if !c.FilesOnly {
		out = append(out, keyChanges(a.Dirs, b.Dirs, "gone: ", "new: ")...)
	}
	out = append(out, keyChanges(a.Files, b.Files, "gone: ", "new: ")...)
	for p, c := range a.Files {
		if d, ok := b.Files[p]; ok && d != c && !skip[p] {
			out = append(out, "changed: "+p+" ("+firstDiff(c, d)+")")
		}
	}
	out = append(out, valueChanges("service", a.Services, b.Services)...)
	if !c.FilesOnly {
		out = append(out, keyChanges(a.ACL, b.ACL, "no longer restricted: ", "restricted: ")...)
		out = append(out, valueChanges("HNS", a.HNS, b.HNS)...)
	}
	sort.Strings(out)
	return out
}

// keyChanges lists each key of a that b does not have as gone+key, and
// each key b added as added+key.
func keyChanges[V any](a, b map[string]V, gone, added string) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, gone+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, added+k)
		}
	}
	return out
}

// valueChanges lists, as what's, each key whose value b changed or took
// away (`what key: "before", then "after"`) and each key b added (`what
// key: new, "value"`).
func valueChanges(what string, a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s %s: %q, then %q", what, k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s %s: new, %q", what, k, v))
		}
	}
	return out
}

// Outside lists the paths b added, changed or removed against a that lie
// outside dirs, other than the directories above them (a procedure
// creates the parents of its folders) and the files in also.
func (a State) Outside(b State, layout config.Layout, dirs []string, also ...string) []string {
	ok := func(p string) bool {
		for _, f := range also {
			if ospath.Same(layout.GOOS, f, p) {
				return true
			}
		}
		for _, d := range dirs {
			if ospath.Within(layout.GOOS, d, p) || (ospath.Within(layout.GOOS, p, d) && (a.Dirs[p] || b.Dirs[p])) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, line := range a.Diff(b, Compare{}) {
		_, p, found := strings.Cut(line, ": ")
		if found && !strings.HasPrefix(line, "service ") && !strings.HasPrefix(line, "HNS ") && !strings.HasPrefix(line, "restricted") && !strings.HasPrefix(line, "no longer") && !ok(p) {
			out = append(out, line)
		}
	}
	return out
}

// firstDiff shows where a and b part, a few characters of each.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	cut := func(s string) string {
		s = s[i:]
		if len(s) > 60 {
			s = s[:60]
		}
		return s
	}
	return fmt.Sprintf("at %d: %q, then %q", i, cut(a), cut(b))
}
