package containerd

import (
	"fmt"
	"sort"
	"strings"
)

// Registry is the CRI image service's registry settings join writes for a
// --registry-config: the folder of hosts.toml files, and the credentials
// per host, which containerd 2.x reads only from config.toml
// (registry.configs, deprecated but read by 2.3 and 2.4; hosts.toml has no
// credentials). config.toml lies in containerd's folder, open to SYSTEM and
// Administrators only.
type Registry struct {
	ConfigPath string
	Auths      map[string]RegistryAuth
}

// RegistryAuth is one host's credentials, as registry.configs.<host>.auth
// takes them.
type RegistryAuth struct {
	Username, Password, Auth, IdentityToken string
}

// writeRegistry appends the registry tables of the version 3 format.
func writeRegistry(b *strings.Builder, r *Registry) error {
	if r == nil {
		return nil
	}
	if r.ConfigPath == "" || strings.ContainsAny(r.ConfigPath, "'\r\n\t") {
		return fmt.Errorf("containerd configuration: the registry hosts folder %q is empty or holds a quote or a control character; choose another", r.ConfigPath)
	}
	table := []string{"plugins", "io.containerd.cri.v1.images", "registry"}
	fmt.Fprintf(b, "\n[%s]\n", TablePath(table))
	fmt.Fprintf(b, "  config_path = '%s'\n", r.ConfigPath)
	hosts := make([]string, 0, len(r.Auths))
	for h := range r.Auths {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		a := r.Auths[h]
		fmt.Fprintf(b, "\n[%s]\n", TablePath(append(append([]string{}, table...), "configs", h, "auth")))
		for _, kv := range []struct{ k, v string }{{"username", a.Username}, {"password", a.Password}, {"auth", a.Auth}, {"identitytoken", a.IdentityToken}} {
			if kv.v != "" {
				fmt.Fprintf(b, "  %s = %s\n", kv.k, BasicString(kv.v))
			}
		}
	}
	return nil
}

// BasicString is s as a TOML basic string: credentials and paths may hold
// any character.
func BasicString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
