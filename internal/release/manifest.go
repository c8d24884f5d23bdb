// Package release reads the release zip build/package.sh makes and decides
// whether it may be installed on a host: every file against SHA256SUMS,
// the manifest against the zip's directory name and the binary's own
// headers, and the version against the one installed. It works on plain
// files and data, so the upgrade command, the cloud's NodeUpgradeJob
// executors and the tests on Linux share one set of rules.
package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/version"
)

// Names of the files every package holds beside the binary.
const (
	// ManifestFile says what the package is; build/package.sh writes it.
	ManifestFile = "manifest.json"
	// SumsFile lists the SHA-256 of every other file, in sha256sum's
	// format, as the operator can check it with `sha256sum -c`.
	SumsFile = "SHA256SUMS"
	// Name is the product name the manifest and the zip's top directory
	// carry.
	Name = "edgecore"
)

// Manifest is what a package declares about itself. Its version is the
// one an upgrade moves to, so it is read from data inside the package that
// SHA256SUMS covers, not from the zip's file name (which anyone may
// rename) nor by running the binary (which cannot run when it is built
// for another architecture, and should not run before it is trusted).
type Manifest struct {
	Name string `json:"name"`
	// Version is this project's release version, e.g. v0.2.0.
	Version string `json:"version"`
	// OS and Arch are Go's names of the platform the binary is built
	// for: windows, amd64.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// KubeEdge is the upstream KubeEdge release the binary is built
	// from: the version cloudcore's NodeUpgradeJob compares.
	KubeEdge string `json:"kubeedge"`
	// Binary is the file name of edgecore in the package.
	Binary string `json:"binary"`
}

// Platform is "os/arch".
func (m Manifest) Platform() string { return m.OS + "/" + m.Arch }

// TopDir is the directory every file of the package lies in:
// edgecore-v0.2.0-windows-amd64.
func (m Manifest) TopDir() string {
	return fmt.Sprintf("%s-%s-%s-%s", Name, m.Version, m.OS, m.Arch)
}

// parseManifest reads manifest.json strictly: a field this version does
// not know means a package format it cannot judge.
func parseManifest(data []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"name", m.Name}, {"version", m.Version}, {"os", m.OS}, {"arch", m.Arch}, {"binary", m.Binary}, {"kubeedge", m.KubeEdge},
	} {
		// The fields are printed to the operator's console and the
		// cloud's job status: a control character could rewrite what
		// the console shows (ANSI escapes) or forge lines.
		if i := strings.IndexFunc(f.value, unicode.IsControl); i >= 0 {
			return m, fmt.Errorf("%s: %s %q holds the control character %U: the package was not made by build/package.sh; use one that was",
				ManifestFile, f.name, f.value, []rune(f.value[i:])[0])
		}
		if strings.TrimSpace(f.value) == "" && f.name != "kubeedge" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return m, fmt.Errorf("%s lacks %s", ManifestFile, strings.Join(missing, ", "))
	}
	if m.Name != Name {
		return m, fmt.Errorf("%s names the product %q, not %q: this is not an edgecore package", ManifestFile, m.Name, Name)
	}
	if err := CheckVersion("version", m.Version); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if strings.ContainsAny(m.Binary, `/\:`) {
		return m, fmt.Errorf("%s: binary %q must be a file name in the package's top directory", ManifestFile, m.Binary)
	}
	return m, nil
}

// CheckVersion accepts a release version as every command and job must
// give it: a semantic version such as v0.2.0, exactly, since it names a
// backup and a staging directory. The semver parser alone lets spaces
// around it through, which would make " v0.2.0" another directory than
// "v0.2.0"; field names the flag or field in the error.
func CheckVersion(field, v string) error {
	if t := strings.TrimSpace(v); t != v {
		return fmt.Errorf("%s %q has spaces around it: give it as %q", field, v, t)
	}
	if _, err := version.ParseSemantic(v); err != nil || strings.ContainsAny(v, `/\:`) {
		return fmt.Errorf("%s %q is not a semantic version such as v0.2.0", field, v)
	}
	return nil
}
