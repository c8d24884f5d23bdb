package registries

import (
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// rke2 is registries.yaml as RKE2's documentation shows it, with a
// prefix rewrite the bundled containerd can carry.
const rke2 = `
mirrors:
  docker.io:
    endpoint:
      - "https://mirror.example:5000"
    rewrite:
      "^(.*)$": "mirrored/$1"
  "*":
    endpoint:
      - "https://mirror.example:5000"
configs:
  "mirror.example:5000":
    auth:
      username: edge
      password: s3cr3t-p4ss
    tls:
      ca_file: C:\certs\ca.pem
      cert_file: C:\certs\client.pem
      key_file: C:\certs\client-key.pem
  harbor.example:
    auth:
      auth: ZWRnZTpoYXJib3ItcGFzcw==
    tls:
      insecure_skip_verify: true
`

const root = `C:\Program Files\containerd\certs.d`

func TestPlanWritesHostsTomlPerRegistryWithMirrorsRewriteCAAndClientCert(t *testing.T) {
	f, err := Parse([]byte(rke2), ospath.Windows)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(f, ospath.Windows, root)
	var paths []string
	for _, h := range p.Hosts {
		paths = append(paths, h.Path)
	}
	// The mirror's own, too: its TLS applies when an image names it.
	want := []string{root + `\_default\hosts.toml`, root + `\docker.io\hosts.toml`, root + `\harbor.example\hosts.toml`, root + `\mirror.example_5000_\hosts.toml`}
	if strings.Join(paths, "|") != strings.Join(want, "|") {
		t.Fatalf("hosts files %v, want %v", paths, want)
	}
	docker := string(p.Hosts[1].Data)
	for _, line := range []string{`server = "https://registry-1.docker.io"`,
		`[host."https://mirror.example:5000/v2/mirrored"]`, `override_path = true`,
		`ca = "C:\\Program Files\\containerd\\certs.d\\mirror.example_5000_\\ca.crt"`,
		`client = [["C:\\Program Files\\containerd\\certs.d\\mirror.example_5000_\\client.cert", "C:\\Program Files\\containerd\\certs.d\\mirror.example_5000_\\client.key"]]`} {
		if !strings.Contains(docker, line) {
			t.Errorf("docker.io's hosts.toml lacks %s:\n%s", line, docker)
		}
	}
	if def := string(p.Hosts[0].Data); strings.Contains(def, "server") || strings.Contains(def, "override_path") || !strings.Contains(def, `[host."https://mirror.example:5000"]`) {
		t.Errorf("_default's hosts.toml:\n%s", def)
	}
	if h := string(p.Hosts[2].Data); !strings.Contains(h, `server = "https://harbor.example"`) || !strings.Contains(h, "skip_verify = true") {
		t.Errorf("harbor's hosts.toml:\n%s", h)
	}
	// The certificates are copied into the mirror's own folder, once.
	if len(p.Copies) != 3 || p.Copies[0].From != `C:\certs\ca.pem` || p.Copies[0].To != root+`\mirror.example_5000_\ca.crt` {
		t.Errorf("copies %+v", p.Copies)
	}
	if p.Auths["mirror.example:5000"].Password != "s3cr3t-p4ss" || p.Auths["harbor.example"].Auth == "" {
		t.Errorf("auths %+v", p.Auths)
	}
	// No credential in any file join writes beside config.toml.
	for _, h := range p.Hosts {
		for _, s := range f.Secrets() {
			if strings.Contains(string(h.Data), s) {
				t.Errorf("%s holds a credential", h.Path)
			}
		}
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "harbor.example") || !strings.Contains(p.Warnings[0], "not verified") {
		t.Errorf("warnings %v", p.Warnings)
	}
	// What preflight reads back is what was written.
	eps, err := ReadHosts("docker.io", p.Hosts[1].Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 2 || !eps[0].Mirror || eps[0].URL != "https://mirror.example:5000/v2/mirrored" || eps[0].CA != root+`\mirror.example_5000_\ca.crt` ||
		eps[0].ClientKey != root+`\mirror.example_5000_\client.key` || eps[1].Mirror || eps[1].URL != "https://registry-1.docker.io" {
		t.Errorf("read back %+v", eps)
	}
}

func TestHostDirIsWhereContainerdLooks(t *testing.T) {
	for _, c := range []struct{ goos, host, want string }{
		{ospath.Windows, "registry.example:5000", "registry.example_5000_"},
		{"linux", "registry.example:5000", "registry.example_5000_"},
		{ospath.Windows, "[::1]:5000", "[1]_5000_"},
		{"linux", "docker.io", "docker.io"},
		{"linux", Wildcard, "_default"},
	} {
		if got := HostDir(c.goos, c.host); got != c.want {
			t.Errorf("HostDir(%s, %s) = %s, want %s", c.goos, c.host, got, c.want)
		}
	}
}

func TestParseRefusesWithTheKeyAndNeverTheCredential(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"mirrors:\n  docker.io:\n    endpoint: [\"mirror.example\"]\n", "mirrors.docker.io.endpoint[0]"},
		{"mirrors:\n  docker.io:\n    endpoint: [\"https://u:hunter2@mirror.example\"]\n", `configs."mirror.example".auth`},
		{"mirrors:\n  docker.io:\n    endpoint: [\"https://m.example\"]\n    rewrite:\n      \"^rancher/(.*)\": \"mirror/rancher/$1\"\n", "rewrites no repository"},
		{"mirrors:\n  https://docker.io:\n    endpoint: [\"https://m.example\"]\n", "mirrors.https://docker.io"},
		{"configs:\n  m.example:\n    auth:\n      username: edge\n", "configs.m.example.auth: gives only one of username and password"},
		{"configs:\n  m.example:\n    auth:\n      username: edge\n      password: hunter2\n      identitytoken: tok3n\n", "more than one"},
		{"configs:\n  m.example:\n    auth:\n      auth: notbase64!!\n", "configs.m.example.auth.auth"},
		{"configs:\n  m.example:\n    tls:\n      ca_file: ca.pem\n", "configs.m.example.tls.ca_file"},
		{"configs:\n  m.example:\n    tls:\n      cert_file: C:\\c.pem\n", "only one of cert_file and key_file"},
		{"configs:\n  m.example:\n    auth:\n      pasword: hunter2\n", "is not a registries.yaml"},
	} {
		_, err := Parse([]byte(c.yaml), ospath.Windows)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error naming %q", c.yaml, err, c.want)
			continue
		}
		for _, secret := range []string{"hunter2", "tok3n"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error for %q shows a credential: %v", c.yaml, err)
			}
		}
	}
}

func TestRedactHidesEveryFormOfTheCredentials(t *testing.T) {
	f, err := Parse([]byte(rke2), ospath.Windows)
	if err != nil {
		t.Fatal(err)
	}
	msg := f.Redact("401 for edge:s3cr3t-p4ss, harbor-pass, ZWRnZTpoYXJib3ItcGFzcw== at https://edge:s3cr3t-p4ss@mirror.example:5000/v2/")
	for _, s := range []string{"s3cr3t-p4ss", "harbor-pass", "ZWRnZTpoYXJib3ItcGFzcw=="} {
		if strings.Contains(msg, s) {
			t.Errorf("%q shows %s", msg, s)
		}
	}
}

func TestRewritesContainerdCannotCarryAreNamed(t *testing.T) {
	for pat, rep := range map[string]string{"^(.*)$": "p/$1", "(.*)": "a/b/$1", "^(.+)$": "x/$1"} {
		if _, err := rewritePrefix(pat, rep); err != nil {
			t.Errorf("%s -> %s: %v", pat, rep, err)
		}
	}
	for pat, rep := range map[string]string{"^rancher/(.*)": "m/rancher/$1", "^(.*)$": "$1", "(.*)": "p/$1/x", "([": "p/$1"} {
		if _, err := rewritePrefix(pat, rep); err == nil {
			t.Errorf("%s -> %s is accepted", pat, rep)
		}
	}
}
