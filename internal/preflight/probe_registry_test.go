package preflight

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeRegistry serves one repository behind an anonymous bearer token, the
// way public registries do.
func fakeRegistry(t *testing.T, repo string, docs map[string]string) *registryClient {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("scope") != "repository:"+repo+":pull" || r.URL.Query().Get("service") != "fake" {
			http.Error(w, "bad scope", http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, `{"token": "t0k"}`)
	})
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="fake",scope="repository:%s:pull"`, srv.URL, repo))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if strings.Contains(r.URL.Path, "/manifests/") && !strings.Contains(r.Header.Get("Accept"), "manifest.list.v2+json") {
			http.Error(w, "accept header lacks the index types", http.StatusNotAcceptable)
			return
		}
		doc, ok := docs[strings.TrimPrefix(r.URL.Path, "/v2/"+repo)]
		if !ok {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		fmt.Fprint(w, doc)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &registryClient{http: srv.Client(), baseURL: func(host string) string {
		if host != "registry.example" {
			t.Errorf("asked registry %q", host)
		}
		return srv.URL
	}}
}

func TestImagePlatformsFromIndex(t *testing.T) {
	c := fakeRegistry(t, "pause", map[string]string{"/manifests/3.9": `{
	  "schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.list.v2+json",
	  "manifests": [
	    {"digest": "sha256:aa", "platform": {"architecture": "amd64", "os": "linux"}},
	    {"digest": "sha256:bb", "platform": {"architecture": "amd64", "os": "windows", "os.version": "10.0.20348.1906"}}
	  ]}`})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := c.platforms(ctx, "registry.example/pause:3.9")
	if err != nil {
		t.Fatal(err)
	}
	if list(got) != "linux/amd64, windows/amd64 10.0.20348.1906" {
		t.Errorf("platforms %s", list(got))
	}
}

func TestImagePlatformsFromSingleManifest(t *testing.T) {
	c := fakeRegistry(t, "win/pause", map[string]string{
		"/manifests/latest": `{"schemaVersion": 2, "config": {"digest": "sha256:cc"}, "layers": []}`,
		"/blobs/sha256:cc":  `{"architecture": "amd64", "os": "windows", "os.version": "10.0.17763.5458"}`,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := c.platforms(ctx, "registry.example/win/pause")
	if err != nil {
		t.Fatal(err)
	}
	if list(got) != "windows/amd64 10.0.17763.5458" {
		t.Errorf("platforms %s", list(got))
	}
}

func TestImagePlatformsErrors(t *testing.T) {
	c := fakeRegistry(t, "pause", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.platforms(ctx, "registry.example/pause:9.9"); err == nil || !strings.HasSuffix(err.Error(), "404 Not Found") {
		t.Errorf("unknown tag: %v", err)
	}
	if _, err := c.platforms(ctx, "Registry.Example/Pause"); err == nil || !strings.Contains(err.Error(), "is not an image reference") {
		t.Errorf("bad reference: %v", err)
	}
}

func TestParseChallenge(t *testing.T) {
	scheme, p := parseChallenge(`Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"`)
	if scheme != "Bearer" || p["realm"] != "https://auth.example/token" || p["service"] != "registry.example" || p["scope"] != "repository:a/b:pull,push" {
		t.Errorf("got %s %v", scheme, p)
	}
	if _, p := parseChallenge(`Bearer realm=https://auth.example/token, service=reg`); p["realm"] != "https://auth.example/token" || p["service"] != "reg" {
		t.Errorf("unquoted: %v", p)
	}
}

func TestKnownGoodPause(t *testing.T) {
	for image, want := range map[string]bool{
		"registry.k8s.io/pause:3.9":                                   true,
		"registry.k8s.io/pause:3.10":                                  true,
		"mcr.microsoft.com/oss/kubernetes/pause:3.9-windows-ltsc2022": true,
		"registry.k8s.io/pause:3.6":                                   false,
		"registry.k8s.io/pause":                                       false, // latest is not pinned
		"kubeedge/pause:3.6":                                          false,
		"registry.k8s.io/pause@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097": false,
	} {
		if got := knownGoodPause(image); got != want {
			t.Errorf("knownGoodPause(%s) = %v", image, got)
		}
	}
}
