package registries

import (
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// The aliases come from the hosts.toml files join writes (NewPlan), read
// back as images import reads them (ReadHosts).
func TestAliasesFollowTheMirrorsJoinWrote(t *testing.T) {
	f, err := Parse([]byte(`
mirrors:
  docker.io:
    endpoint: ["https://harbor.example:5000"]
    rewrite: {"^(.*)$": "dockerhub-proxy/$1"}
  quay.io:
    endpoint: ["https://harbor.example:5000/v2"]
    rewrite: {"^(.*)$": "quay-proxy/$1"}
  "registry.example:5000":
    endpoint: ["https://mirror.example", "https://backup.example:8443"]
  "*":
    endpoint: ["https://catchall.example"]
`), ospath.Windows)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(f, ospath.Windows, `C:\Program Files\containerd\certs.d`)
	var eps []Endpoint
	for _, h := range p.Hosts {
		dir := ospath.Base(ospath.Windows, ospath.Dir(ospath.Windows, h.Path))
		e, err := ReadHosts(dir, h.Data)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e...)
	}
	for _, tc := range []struct{ name, want string }{
		{"harbor.example:5000/dockerhub-proxy/library/nginx:1.25", "docker.io/library/nginx:1.25"},
		{"harbor.example:5000/quay-proxy/prometheus/node-exporter:v1.8.0", "quay.io/prometheus/node-exporter:v1.8.0"},
		{"mirror.example/team/app:2", "registry.example:5000/team/app:2"},
		{"backup.example:8443/team/app@sha256:" + strings.Repeat("a", 64), "registry.example:5000/team/app@sha256:" + strings.Repeat("a", 64)},
		// Outside every prefix, or only on the mirror of every registry.
		{"harbor.example:5000/other/app:1", ""},
		{"catchall.example/library/busybox:1.36", ""},
		// The registry's own name, and what is no reference.
		{"docker.io/library/nginx:1.25", ""},
		{"busybox:1.36", ""},
		{"Not A Reference", ""},
	} {
		if got := strings.Join(Aliases(eps, tc.name), ","); got != tc.want {
			t.Errorf("Aliases(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRegistryOfDirIsHostDirsInverse(t *testing.T) {
	for _, reg := range []string{"docker.io", "registry.example:5000", "127.0.0.1:5000"} {
		for _, goos := range []string{ospath.Windows, "linux"} {
			if got := RegistryOfDir(HostDir(goos, reg)); got != reg {
				t.Errorf("RegistryOfDir(HostDir(%s, %s)) = %q", goos, reg, got)
			}
		}
	}
	if got := RegistryOfDir(HostDir(ospath.Windows, Wildcard)); got != "" {
		t.Errorf("the wildcard's folder is registry %q", got)
	}
}
