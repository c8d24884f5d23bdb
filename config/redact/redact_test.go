package redact

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://alice:s3cr3t@repo.example/e-{version}.zip":        "https://***@repo.example/e-{version}.zip",
		"https://alice@repo.example:8443/e.zip#top":                "https://***@repo.example:8443/e.zip#top",
		"HTTPS://alice:s3cr3t@repo.example/e.zip":                  "HTTPS://***@repo.example/e.zip",
		"https://repo.example/c/e.zip?sv=2024&sig=s3cr3t":          "https://repo.example/c/e.zip?***",
		"https://alice:s3cr3t@repo.example/e.zip?sig=s3cr3t#frag":  "https://***@repo.example/e.zip?***#frag",
		"https://alice:p@ss/w@rd@repo.example/e.zip":               "https://***@repo.example/e.zip",
		"https://alice:s3cr3t@[::1/e.zip":                          "https://***@[::1/e.zip",
		"ftp://alice:s3cr3t@files/e.zip":                           "ftp://***@files/e.zip",
		"https://repo.example/edge%20core/e-{version}.zip":         "https://repo.example/edge%20core/e-{version}.zip",
		`\\files\edge core\edgecore-{version}-windows-amd64.zip`:   `\\files\edge core\edgecore-{version}-windows-amd64.zip`,
		`C:\pkgs\a@b\edgecore-v0.2.0.zip`:                          `C:\pkgs\a@b\edgecore-v0.2.0.zip`,
		`\\files\share\odd://name@x.zip`:                           `\\files\share\odd://name@x.zip`,
		"/srv/packages/edgecore-v0.2.0-linux-amd64.zip":            "/srv/packages/edgecore-v0.2.0-linux-amd64.zip",
		"https://repo.example/e.zip":                               "https://repo.example/e.zip",
		"https://alice:s3cr3t@repo.example":                        "https://***@repo.example",
		"://alice:s3cr3t@repo.example/e.zip is not a URL nor path": "://alice:s3cr3t@repo.example/e.zip is not a URL nor path",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every URL in a message loses its credentials, whatever quotes or
// punctuation the message puts around it, and every secret named by value
// goes; the rest of the message stays.
func TestStringRedactsEveryURLAndSecret(t *testing.T) {
	for in, want := range map[string]string{
		`modules.edgeHub.httpServer: Invalid value: "https://alice:s3cr3t@10.0.0.1:10002": not a https:// URL`: `modules.edgeHub.httpServer: Invalid value: "https://***@10.0.0.1:10002": not a https:// URL`,
		"fetch https://bob:pw@repo/e.zip?sig=t0ken: 404":                                                       "fetch https://***@repo/e.zip?***: 404",
		"two: (tcp://u:p@h:1883), 'https://a:b@c/d'.":                                                          "two: (tcp://***@h:1883), 'https://***@c/d'.",
		`quoted by %q: "https://u:p\"w@h/x"`:                                                                   `quoted by %q: "https://***@h/x"`,
		"no URL here: C:\\x://y and ://z":                                                                      "no URL here: C:\\x://y and ://z",
		"token abc.def.ghi in text":                                                                            "token " + Secret + " in text",
		"9https://u:p@h":                                                                                       "9https://***@h",
	} {
		if got := String(in, "abc.def.ghi", "", "  "); got != want {
			t.Errorf("String(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	for _, leak := range []string{"s3cr3t", "t0ken", "alice"} {
		if got := String("see https://alice:s3cr3t@h/x?sig=t0ken now"); strings.Contains(got, leak) {
			t.Errorf("%q shows %q", got, leak)
		}
	}
}
