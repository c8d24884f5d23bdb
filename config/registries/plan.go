package registries

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Plan is what join writes for a File: under the hosts folder (config.toml's
// config_path), a folder per registry with its hosts.toml, and the
// certificate files copied in; the credentials go into config.toml.
type Plan struct {
	// Root is the hosts folder, config.toml's config_path.
	Root string
	// Dirs are the folders to create under Root, in order.
	Dirs []string
	// Copies are the operator's certificate files and where they go.
	Copies []Copy
	// Hosts are the hosts.toml files, one per registry.
	Hosts []HostsFile
	// Auths are the credentials per host, for config.toml's
	// registry.configs (containerd reads no credentials from hosts.toml).
	Auths map[string]Auth
	// Warnings name what lowers the protection of a pull: a registry
	// whose certificate is not verified, or that is reached over HTTP.
	Warnings []string
}

// Copy is a certificate file join copies into the hosts folder.
type Copy struct {
	// What says which file it is, e.g. "the CA of mirror.example:5000".
	What     string
	From, To string
}

// HostsFile is one registry's hosts.toml.
type HostsFile struct {
	// Registry is the registry it configures (Wildcard: every one).
	Registry string
	Path     string
	Data     []byte
}

// Files are every file the plan writes, for the installation's record.
func (p Plan) Files() []string {
	var out []string
	for _, c := range p.Copies {
		out = append(out, c.To)
	}
	for _, h := range p.Hosts {
		out = append(out, h.Path)
	}
	return out
}

// Certificate file names in a host's folder, as docker's certs.d names
// them (containerd reads them by these names too when a folder has no
// hosts.toml).
const (
	caName     = "ca.crt"
	certName   = "client.cert"
	keyName    = "client.key"
	hostsName  = "hosts.toml"
	defaultDir = "_default"
)

// HostDir is the folder containerd looks in for host's configuration on
// goos: host_port_ for host:port (core/remotes/docker/config's
// hostDirectory), without colons on Windows, _default for Wildcard.
func HostDir(goos, host string) string {
	if host == Wildcard {
		return defaultDir
	}
	if i := strings.LastIndex(host, ":"); i > 0 {
		host = host[:i] + "_" + host[i+1:] + "_"
	}
	if goos == ospath.Windows {
		host = strings.ReplaceAll(host, ":", "")
	}
	return host
}

// upstreamServer is the URL containerd pulls registry's images from when
// no mirror answers.
func upstreamServer(registry string) string {
	if registry == "docker.io" {
		return "https://registry-1.docker.io"
	}
	return "https://" + registry
}

// NewPlan is what f makes under root on goos.
func NewPlan(f *File, goos, root string) Plan {
	p := Plan{Root: root, Auths: map[string]Auth{}}
	if f == nil {
		return p
	}
	dirs := map[string]bool{}
	addDir := func(d string) {
		if !dirs[d] {
			dirs[d] = true
			p.Dirs = append(p.Dirs, d)
		}
	}
	// Each host's certificates, copied once into its own folder.
	type certs struct{ ca, cert, key string }
	copied := map[string]certs{}
	for _, host := range sortedKeys(f.Configs) {
		c := f.Configs[host]
		if c.Auth != nil {
			p.Auths[host] = *c.Auth
		}
		t := c.TLS
		if t == nil {
			continue
		}
		dir := ospath.Join(goos, root, HostDir(goos, host))
		var got certs
		add := func(what, from, name string) string {
			if from == "" {
				return ""
			}
			to := ospath.Join(goos, dir, name)
			addDir(dir)
			p.Copies = append(p.Copies, Copy{What: what + " of " + host, From: from, To: to})
			return to
		}
		got.ca = add("the CA", t.CAFile, caName)
		got.cert = add("the client certificate", t.CertFile, certName)
		got.key = add("the client key", t.KeyFile, keyName)
		copied[host] = got
		if t.InsecureSkipVerify {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: configs.%s.tls.insecure_skip_verify is set: its certificate is not verified, so anyone on the path may serve images as it", host, host))
		}
	}
	// A hosts.toml for each mirrored registry, and for each configured
	// host that is not one of the mirrors' registries, so that its TLS
	// applies when it is pulled from directly.
	registries := sortedKeys(f.Mirrors)
	for _, host := range sortedKeys(f.Configs) {
		if _, ok := f.Mirrors[host]; !ok && f.Configs[host].TLS != nil {
			registries = append(registries, host)
		}
	}
	sort.SliceStable(registries, func(i, j int) bool { return registries[i] < registries[j] })
	for _, reg := range registries {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s: written by `edgecore.exe join %s`; reset removes it.\n", label(reg), Flag)
		if reg != Wildcard {
			fmt.Fprintf(&b, "server = %s\n", containerd.BasicString(upstreamServer(reg)))
			writeTLS(&b, f.Configs[reg].TLS, copied[reg])
		}
		m := f.Mirrors[reg]
		prefix := ""
		for pat, rep := range m.Rewrite {
			prefix, _ = rewritePrefix(pat, rep) // checked by Parse
		}
		for _, raw := range m.Endpoint {
			e, _ := parseEndpoint(raw) // checked by Parse
			u := *e.URL
			override := false
			if prefix != "" {
				// The API root and the prefix in the path; containerd
				// then appends the repository.
				root := strings.TrimSuffix(u.Path, "/")
				if !strings.HasSuffix(root, "/v2") {
					root += "/v2"
				}
				u.Path = root + "/" + prefix
				override = true
			}
			if u.Scheme == "http" {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the mirror %s is plain HTTP: images and credentials cross the network unprotected", label(reg), u.String()))
			}
			fmt.Fprintf(&b, "\n[host.%s]\n", containerd.BasicString(u.String()))
			b.WriteString("  capabilities = [\"pull\", \"resolve\"]\n")
			if override {
				b.WriteString("  override_path = true\n")
			}
			c := f.Configs[e.Host]
			writeTLS(&b, c.TLS, copied[e.Host])
		}
		dir := ospath.Join(goos, root, HostDir(goos, reg))
		addDir(dir)
		p.Hosts = append(p.Hosts, HostsFile{Registry: reg, Path: ospath.Join(goos, dir, hostsName), Data: []byte(b.String())})
	}
	sort.Strings(p.Warnings)
	return p
}

func label(reg string) string {
	if reg == Wildcard {
		return "every registry"
	}
	return "registry " + reg
}

// writeTLS writes a host's TLS keys, indented under a [host] table (or at
// the top for the registry's own server).
func writeTLS(b *strings.Builder, t *TLS, c struct{ ca, cert, key string }) {
	if t == nil {
		return
	}
	if c.ca != "" {
		fmt.Fprintf(b, "  ca = %s\n", containerd.BasicString(c.ca))
	}
	if c.cert != "" {
		fmt.Fprintf(b, "  client = [[%s, %s]]\n", containerd.BasicString(c.cert), containerd.BasicString(c.key))
	}
	if t.InsecureSkipVerify {
		b.WriteString("  skip_verify = true\n")
	}
}
