package registries

import (
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/distribution/reference"
)

// hostPortDir is HostDir's folder of a host:port.
var hostPortDir = regexp.MustCompile(`^(.+)_([0-9]+)_$`)

// RegistryOfDir is the registry a hosts folder stands for, HostDir's
// inverse: host:port for host_port_, "" for _default (every registry).
func RegistryOfDir(dir string) string {
	if dir == defaultDir {
		return ""
	}
	if m := hostPortDir.FindStringSubmatch(dir); m != nil {
		return m[1] + ":" + m[2]
	}
	return dir
}

// Aliases are the other names the image named name has for the node's
// pulls, by the hosts.toml endpoints eps (ReadHosts of every folder): a
// pull of R/<repo>:<tag> whose hosts.toml sends it to the mirror https://H
// fetches H/<repo>:<tag>, or H/<prefix>/<repo>:<tag> through a prefix
// rewrite (override_path https://H/v2/<prefix>). An archive saved from
// the mirror under that name holds the image such a pull gets, so it is
// R/<repo>:<tag> too, which is the name the node's pods give. Mirrors of
// every registry (_default) name no registry and give no alias; nor does
// a name that is no image reference. Normalised names, sorted.
func Aliases(eps []Endpoint, name string) []string {
	named, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return nil
	}
	domain, path := reference.Domain(named), reference.Path(named)
	seen := map[string]bool{}
	var out []string
	for _, e := range eps {
		reg := RegistryOfDir(e.Registry)
		if !e.Mirror || reg == "" || reg == domain {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil || !strings.EqualFold(u.Host, domain) {
			continue
		}
		root := strings.Trim(u.Path, "/")
		prefix := ""
		switch {
		case e.OverridePath:
			p, ok := strings.CutPrefix(root, "v2")
			if !ok || (p != "" && !strings.HasPrefix(p, "/")) {
				continue
			}
			prefix = strings.Trim(p, "/")
		case root != "" && root != "v2":
			continue // an API root under a path: no image name maps to it
		}
		rest := path
		if prefix != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(path, prefix+"/"); !ok {
				continue
			}
		}
		alias := reg + "/" + rest
		if t, ok := named.(reference.Tagged); ok {
			alias += ":" + t.Tag()
		}
		if d, ok := named.(reference.Digested); ok {
			alias += "@" + d.Digest().String()
		}
		a, err := reference.ParseNormalizedNamed(alias)
		if err != nil || seen[a.String()] || a.String() == named.String() {
			continue
		}
		seen[a.String()] = true
		out = append(out, a.String())
	}
	sort.Strings(out)
	return out
}
