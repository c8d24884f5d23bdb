package registries

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Endpoint is one place a hosts.toml sends pulls to, with how to connect:
// what preflight checks answers.
type Endpoint struct {
	// Registry is the hosts.toml's folder name (the registry, as
	// HostDir writes it).
	Registry string
	// URL is the endpoint's URL, with the API root containerd uses.
	URL string
	// CA, ClientCert and ClientKey are files; empty when not set.
	CA, ClientCert, ClientKey string
	SkipVerify                bool
	// Mirror is false for the registry's own server.
	Mirror bool
}

type hostsTLS struct {
	CA         any   `toml:"ca"`
	Client     any   `toml:"client"`
	SkipVerify *bool `toml:"skip_verify"`
}

type hostsEntry struct {
	hostsTLS
	Capabilities []string `toml:"capabilities"`
	OverridePath bool     `toml:"override_path"`
}

type hostsDoc struct {
	Server string `toml:"server"`
	hostsTLS
	Host map[string]hostsEntry `toml:"host"`
}

// ReadHosts reads a hosts.toml of the folder registry: its mirrors, then
// its server, each with its TLS. Only the forms containerd reads are
// taken (ca as a file or list of files, client as [cert, key] pairs).
func ReadHosts(registry string, data []byte) ([]Endpoint, error) {
	var d hostsDoc
	if err := toml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("hosts.toml of %s: %v", registry, err)
	}
	var out []Endpoint
	urls := make([]string, 0, len(d.Host))
	for u := range d.Host {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	for _, u := range urls {
		e, err := endpointOf(registry, u, d.Host[u].hostsTLS)
		if err != nil {
			return nil, err
		}
		e.Mirror = true
		out = append(out, e)
	}
	if d.Server != "" {
		e, err := endpointOf(registry, d.Server, d.hostsTLS)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func endpointOf(registry, u string, t hostsTLS) (Endpoint, error) {
	e := Endpoint{Registry: registry, URL: strings.TrimSuffix(u, "/")}
	switch ca := t.CA.(type) {
	case nil:
	case string:
		e.CA = ca
	case []any:
		if len(ca) > 0 {
			e.CA, _ = ca[0].(string)
		}
	default:
		return e, fmt.Errorf("hosts.toml of %s: ca of %s is a %T, not a file", registry, u, ca)
	}
	switch c := t.Client.(type) {
	case nil:
	case string:
		e.ClientCert = c
	case []any:
		if len(c) > 0 {
			switch pair := c[0].(type) {
			case string:
				e.ClientCert = pair
			case []any:
				if len(pair) == 2 {
					e.ClientCert, _ = pair[0].(string)
					e.ClientKey, _ = pair[1].(string)
				}
			}
		}
	default:
		return e, fmt.Errorf("hosts.toml of %s: client of %s is a %T, not [cert, key]", registry, u, c)
	}
	if t.SkipVerify != nil {
		e.SkipVerify = *t.SkipVerify
	}
	return e, nil
}
