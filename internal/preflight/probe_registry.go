package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/distribution/reference"
)

// manifestTypes are what the client accepts, index types first so that a
// multi-platform image answers with its list of platforms.
var manifestTypes = []string{
	"application/vnd.oci.image.index.v1+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.docker.distribution.manifest.v2+json",
}

// maxDocument bounds what is read from a registry; manifests and image
// configs are a few KiB.
const maxDocument = 4 << 20

// registryClient reads an image's platforms with the registry HTTP API
// (anonymous pull, as containerd does for a public sandbox image).
type registryClient struct {
	http *http.Client
	// baseURL maps a registry host to its URL; nil means https://host.
	baseURL func(host string) string
}

func (c *registryClient) platforms(ctx context.Context, image string) ([]Platform, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil, fmt.Errorf("%q is not an image reference: %w", image, err)
	}
	named = reference.TagNameOnly(named)
	ref := ""
	if d, ok := named.(reference.Digested); ok {
		ref = d.Digest().String()
	} else if t, ok := named.(reference.Tagged); ok {
		ref = t.Tag()
	}
	host := reference.Domain(named)
	if host == "docker.io" {
		host = "registry-1.docker.io"
	}
	base := "https://" + host
	if c.baseURL != nil {
		base = c.baseURL(host)
	}
	repo := reference.Path(named)
	s := &registrySession{client: c.client(), repo: repo}
	body, err := s.get(ctx, base+"/v2/"+repo+"/manifests/"+ref, manifestTypes)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Manifests []struct {
			Platform *struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
				OSVersion    string `json:"os.version"`
				Variant      string `json:"variant"`
			} `json:"platform"`
		} `json:"manifests"`
		Config *struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("manifest of %s is not JSON: %w", image, err)
	}
	if doc.Config == nil {
		var out []Platform
		for _, m := range doc.Manifests {
			if m.Platform != nil {
				out = append(out, Platform{OS: m.Platform.OS, Architecture: m.Platform.Architecture, OSVersion: m.Platform.OSVersion, Variant: m.Platform.Variant})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("manifest of %s names no platforms", image)
		}
		return out, nil
	}
	// A single-platform image keeps its platform in the image config.
	body, err = s.get(ctx, base+"/v2/"+repo+"/blobs/"+doc.Config.Digest, nil)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		OSVersion    string `json:"os.version"`
		Variant      string `json:"variant"`
	}
	if err := json.Unmarshal(body, &cfg); err != nil || cfg.OS == "" {
		return nil, fmt.Errorf("image config of %s names no platform", image)
	}
	return []Platform{{OS: cfg.OS, Architecture: cfg.Architecture, OSVersion: cfg.OSVersion, Variant: cfg.Variant}}, nil
}

func (c *registryClient) client() *http.Client {
	if c.http != nil {
		return c.http
	}
	return http.DefaultClient
}

// registrySession holds the bearer token of one lookup.
type registrySession struct {
	client *http.Client
	repo   string
	token  string
}

func (s *registrySession) get(ctx context.Context, u string, accept []string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		if len(accept) > 0 {
			req.Header.Set("Accept", strings.Join(accept, ", "))
		}
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode == http.StatusOK:
			return body, nil
		case resp.StatusCode == http.StatusUnauthorized && attempt == 0:
			if s.token, err = s.fetchToken(ctx, resp.Header.Get("WWW-Authenticate")); err != nil {
				return nil, err
			}
			continue
		case resp.StatusCode == http.StatusUnauthorized:
			return nil, errors.New("the registry refuses anonymous pulls of " + s.repo)
		}
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
}

// fetchToken follows a Bearer challenge to an anonymous pull token, the way
// Docker Hub, registry.k8s.io and mcr.microsoft.com hand them out.
func (s *registrySession) fetchToken(ctx context.Context, challenge string) (string, error) {
	scheme, params := parseChallenge(challenge)
	if !strings.EqualFold(scheme, "bearer") || params["realm"] == "" {
		return "", errors.New("the registry refuses anonymous pulls of " + s.repo)
	}
	q := url.Values{}
	if svc := params["service"]; svc != "" {
		q.Set("service", svc)
	}
	scope := params["scope"]
	if scope == "" {
		scope = "repository:" + s.repo + ":pull"
	}
	q.Set("scope", scope)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, params["realm"]+"?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token for %s: %s", s.repo, resp.Status)
	}
	var tok struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(&tok); err != nil {
		return "", fmt.Errorf("token for %s: %w", s.repo, err)
	}
	if tok.Token == "" {
		tok.Token = tok.AccessToken
	}
	if tok.Token == "" {
		return "", fmt.Errorf("token for %s: the answer holds none", s.repo)
	}
	return tok.Token, nil
}

// parseChallenge splits `Bearer realm="...",service="...",scope="..."`;
// quoted values may hold commas.
func parseChallenge(h string) (string, map[string]string) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		key = strings.ToLower(strings.TrimSpace(key))
		var val string
		if strings.HasPrefix(after, `"`) {
			end := strings.Index(after[1:], `"`)
			if end < 0 {
				val, after = after[1:], ""
			} else {
				val, after = after[1:1+end], after[2+end:]
			}
		} else {
			val, after, _ = strings.Cut(after, ",")
			after = "," + after
		}
		params[key] = strings.TrimSpace(val)
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(after), ","))
	}
	return scheme, params
}
