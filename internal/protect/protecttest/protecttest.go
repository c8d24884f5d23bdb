// Package protecttest lists a fake Windows host's entries for the tests
// of the packages that hand protect a Host: protect walks every
// restricted directory through Host.List.
package protecttest

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// Inherited is what an entry below a restricted folder has.
const Inherited = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"

// List is a Host.List over paths, a host's paths with their owner and
// DACL as SDDL (paths() is read at each call, so that a fake that grows
// is listed as it is). A path is compared as Windows does (ospath.Key);
// an entry is a folder when paths hold something below it or its name has
// no extension; a folder named only as the parent of another path has
// Inherited. Every entry has one name and is no link.
func List(paths func() map[string]string) func(dir string) ([]acl.Entry, error) {
	return func(dir string) ([]acl.Entry, error) {
		goos := config.Windows
		all := paths()
		key := ospath.Key(goos, dir)
		prefix := strings.TrimSuffix(key, `\`) + `\`
		found := false
		children := map[string]string{} // name as written -> its path
		below := map[string]bool{}
		for p := range all {
			k := ospath.Key(goos, p)
			if k == key {
				found = true
			}
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			found = true
			c := ospath.Clean(goos, p)
			rest := c[len(prefix):]
			name, more, _ := strings.Cut(rest, `\`)
			if _, ok := children[strings.ToUpper(name)]; !ok {
				children[strings.ToUpper(name)] = c[:len(prefix)+len(name)]
			}
			if more != "" {
				below[strings.ToUpper(name)] = true
			}
		}
		if !found {
			return nil, fmt.Errorf("list %s: %w", dir, fs.ErrNotExist)
		}
		var out []acl.Entry
		for upper, p := range children {
			sddl := Inherited
			for q, s := range all {
				if ospath.Same(goos, q, p) {
					sddl = s
				}
			}
			sec, err := acl.ParseSDDL(sddl)
			if err != nil {
				return nil, err
			}
			name := p[len(prefix):]
			out = append(out, acl.Entry{Name: name, Dir: below[upper] || !strings.Contains(name, "."), Security: sec, Links: 1, ID: ospath.Key(goos, p)})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
}
