// Package registries reads the private-registry configuration `join
// --registry-config` takes, in the mirrors/configs format RKE2 documents for
// its registries.yaml (so that operators reuse theirs), and turns it into
// what containerd 2.x reads: a hosts.toml per registry under config.toml's
// registry config_path (mirrors, rewrites, a private CA, client
// certificates, insecure registries) and the credentials for config.toml.
//
// It decides only: the files and their contents, as data. Reading the
// operator's certificate files and writing into containerd's restricted
// folder are the installer's (internal/runtimeinstall). Every message of
// this package leaves the credentials out (Redact).
package registries

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/redact"
)

// Flag is join's flag that names the file.
const Flag = "--registry-config"

// File is registries.yaml as RKE2 documents it.
type File struct {
	// Mirrors maps a registry (docker.io, registry.example:5000, or * for
	// every registry) to the endpoints pulls go to first.
	Mirrors map[string]Mirror `json:"mirrors,omitempty"`
	// Configs maps a registry or an endpoint's host[:port] to how to
	// connect to it.
	Configs map[string]HostConfig `json:"configs,omitempty"`
}

// Mirror is a registry's mirrors, tried in order before the registry itself.
type Mirror struct {
	Endpoint []string `json:"endpoint,omitempty"`
	// Rewrite maps a regular expression over the repository to its
	// replacement at the mirror.
	Rewrite map[string]string `json:"rewrite,omitempty"`
}

// HostConfig is how to connect to one host.
type HostConfig struct {
	Auth *Auth `json:"auth,omitempty"`
	TLS  *TLS  `json:"tls,omitempty"`
}

// Auth are a host's credentials: a username and password, or auth (their
// base64 user:password), or an identity token.
type Auth struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
}

// TLS is a host's TLS: the CA that signed its certificate, a client
// certificate and key, or no verification at all (opt-in).
type TLS struct {
	CAFile             string `json:"ca_file,omitempty"`
	CertFile           string `json:"cert_file,omitempty"`
	KeyFile            string `json:"key_file,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// Wildcard is the mirror entry for every registry.
const Wildcard = "*"

// Parse reads registries.yaml and checks it for goos, where the
// certificate files must be; every problem is reported, each naming its
// key, and no message carries a credential of the file.
func Parse(data []byte, goos string) (*File, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		// The decoder may quote a value; the file's secrets are not
		// known before it decodes, so the message keeps only what
		// names the place.
		return nil, fmt.Errorf("%s is not a registries.yaml (mirrors, configs): %s", Flag, firstLine(err.Error()))
	}
	if err := f.validate(goos); err != nil {
		return nil, errors.New(f.Redact(err.Error()))
	}
	return &f, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Secrets are the file's credentials, for Redact.
func (f *File) Secrets() []string {
	var out []string
	for _, c := range f.Configs {
		if c.Auth == nil {
			continue
		}
		for _, s := range []string{c.Auth.Password, c.Auth.Auth, c.Auth.IdentityToken} {
			if s != "" {
				out = append(out, s)
			}
		}
		if user, pass, ok := decodeAuth(c.Auth.Auth); ok && pass != "" {
			out = append(out, pass, user+":"+pass)
		}
	}
	return out
}

// Redact is s without the file's credentials and without the user
// information of any URL (config/redact).
func (f *File) Redact(s string) string {
	if f == nil {
		return redact.String(s)
	}
	return redact.String(s, f.Secrets()...)
}

func decodeAuth(auth string) (user, pass string, ok bool) {
	if auth == "" {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(auth)
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(b), ":")
}

// validHost is a registry's or endpoint's host[:port], as containerd names
// them: no scheme, no path.
func validHost(h string) error {
	if h == "" {
		return errors.New("is empty")
	}
	if strings.Contains(h, "://") || strings.ContainsAny(h, "/\\ \t\r\n\"'@") {
		return errors.New("is not a host[:port] (no scheme, path, quote or credentials)")
	}
	host := h
	if hp, port, err := net.SplitHostPort(h); err == nil {
		if port == "" {
			return errors.New("has an empty port")
		}
		host = hp
	}
	if host == "" {
		return errors.New("has no host")
	}
	return nil
}

// rewritePattern is the one rewrite containerd's hosts.toml can carry: one
// that prefixes every repository (override_path and the prefix in the
// endpoint's path). RKE2's per-repository rewrites need its patched
// containerd.
var rewritePattern = regexp.MustCompile(`^\^?\((\.\*|\.\+)\)\$?$`)

// rewritePrefix is the prefix a rewrite adds, or an error saying why
// upstream containerd cannot do it.
func rewritePrefix(pattern, replacement string) (string, error) {
	if _, err := regexp.Compile(pattern); err != nil {
		return "", fmt.Errorf("%q is not a regular expression: %v", pattern, err)
	}
	prefix, ok := strings.CutSuffix(replacement, "$1")
	if !rewritePattern.MatchString(pattern) || !ok || strings.Contains(prefix, "$") || prefix == "" {
		return "", fmt.Errorf("%q: %q cannot be written for the bundled containerd, whose hosts.toml rewrites no repository: "+
			"only a prefix for every repository is possible, as \"^(.*)$\": \"<project>/$1\"; or mirror the repositories under their own names", pattern, replacement)
	}
	prefix = strings.Trim(prefix, "/")
	if strings.ContainsAny(prefix, "\\ \t\r\n\"'?#") || strings.Contains(prefix, "..") {
		return "", fmt.Errorf("%q: the prefix %q is not a repository path", pattern, prefix)
	}
	return prefix, nil
}

func (f *File) validate(goos string) error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	for _, name := range sortedKeys(f.Mirrors) {
		m := f.Mirrors[name]
		key := "mirrors." + name
		if name != Wildcard {
			if err := validHost(name); err != nil {
				bad(key, "the registry %s; give it as in image names, e.g. docker.io or registry.example:5000", err)
			}
		}
		if len(m.Endpoint) == 0 && len(m.Rewrite) == 0 {
			bad(key, "has no endpoint; list the mirrors' URLs under endpoint")
		}
		for i, e := range m.Endpoint {
			if _, err := parseEndpoint(e); err != nil {
				bad(fmt.Sprintf("%s.endpoint[%d]", key, i), "%v", err)
			}
		}
		if len(m.Rewrite) > 1 {
			bad(key+".rewrite", "has %d rewrites; the bundled containerd takes one prefix for every repository", len(m.Rewrite))
		}
		for p, r := range m.Rewrite {
			if _, err := rewritePrefix(p, r); err != nil {
				bad(key+".rewrite", "%v", err)
			}
		}
		if len(m.Rewrite) > 0 && len(m.Endpoint) == 0 {
			bad(key+".rewrite", "applies at mirrors only; list them under endpoint")
		}
	}
	for _, host := range sortedKeys(f.Configs) {
		c := f.Configs[host]
		key := "configs." + host
		if err := validHost(host); err != nil {
			bad(key, "the host %s; give the registry's or mirror's host[:port], as in its endpoint URL", err)
		}
		if a := c.Auth; a != nil {
			n := 0
			if a.Username != "" || a.Password != "" {
				n++
				if a.Username == "" || a.Password == "" {
					bad(key+".auth", "gives only one of username and password; give both")
				}
			}
			if a.Auth != "" {
				n++
				if _, _, ok := decodeAuth(a.Auth); !ok {
					bad(key+".auth.auth", "is not base64 of username:password (as docker's config.json keeps it)")
				}
			}
			if a.IdentityToken != "" {
				n++
			}
			switch {
			case n == 0:
				bad(key+".auth", "is empty; give username and password, auth or identitytoken")
			case n > 1:
				bad(key+".auth", "gives more than one of username/password, auth and identitytoken; keep one")
			}
		}
		if t := c.TLS; t != nil {
			for _, p := range []struct{ name, path string }{{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
				if p.path != "" && !ospath.IsAbs(goos, p.path) {
					bad(key+".tls."+p.name, "%q is not an absolute path; join copies the file from there", p.path)
				}
			}
			if (t.CertFile == "") != (t.KeyFile == "") {
				bad(key+".tls", "gives only one of cert_file and key_file; a client certificate needs both")
			}
		}
	}
	return errors.Join(errs...)
}

// endpoint is a mirror endpoint's URL, parsed.
type endpoint struct {
	URL  *url.URL
	Host string
}

func parseEndpoint(raw string) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return endpoint{}, fmt.Errorf("%q is not an http(s) URL with a host; give e.g. https://mirror.example:5000", redact.URL(raw))
	}
	if u.User != nil {
		return endpoint{}, fmt.Errorf("%q carries credentials; put them under configs.%q.auth", redact.URL(raw), u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return endpoint{}, fmt.Errorf("%q has a query or fragment; give the registry's URL only", redact.URL(raw))
	}
	return endpoint{URL: u, Host: u.Host}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
