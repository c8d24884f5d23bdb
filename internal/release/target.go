package release

import (
	"debug/buildinfo"
	"debug/elf"
	"debug/pe"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Target is the host a package is meant to be installed on.
type Target struct {
	// OS and Arch are the host's platform in Go's names.
	OS, Arch string
	// Installed is the version of the edgecore the service runs now; ""
	// when it could not be told.
	Installed string
	// AllowDowngrade accepts a package older than Installed
	// (--allow-downgrade).
	AllowDowngrade bool
}

// Refusal says why a package may not be installed, and what to do.
type Refusal struct {
	Reason string
	Fix    string
}

func (r *Refusal) Error() string {
	if r.Fix == "" {
		return r.Reason
	}
	return r.Reason + ": " + r.Fix
}

// ErrSameVersion is the Refusal for a package of the version installed;
// callers report it as "nothing to do" rather than as a failure.
type ErrSameVersion struct{ Version string }

func (e *ErrSameVersion) Error() string {
	return fmt.Sprintf("edgecore %s is installed already; nothing to do", e.Version)
}

// Check refuses a package built for another platform, and one older than
// the installed version unless t.AllowDowngrade. A package of the
// installed version returns *ErrSameVersion.
func Check(m Manifest, t Target) error {
	if m.OS != t.OS || m.Arch != t.Arch {
		return &Refusal{
			Reason: fmt.Sprintf("the package is edgecore %s for %s, and this host is %s/%s", m.Version, m.Platform(), t.OS, t.Arch),
			Fix:    fmt.Sprintf("use edgecore-%s-%s-%s.zip", m.Version, t.OS, t.Arch),
		}
	}
	if t.Installed == "" {
		if t.AllowDowngrade {
			return nil
		}
		return &Refusal{
			Reason: "the installed version of edgecore could not be told, so an older package cannot be ruled out",
			Fix:    "pass --allow-downgrade to install " + m.Version + " anyway",
		}
	}
	c, err := Compare(m.Version, t.Installed)
	if err != nil {
		return &Refusal{Reason: err.Error(), Fix: "pass --allow-downgrade to install " + m.Version + " anyway"}
	}
	switch {
	case c == 0:
		return &ErrSameVersion{Version: t.Installed}
	case c < 0 && !t.AllowDowngrade:
		return &Refusal{
			Reason: fmt.Sprintf("the package is edgecore %s, older than the installed %s", m.Version, t.Installed),
			Fix:    "pass --allow-downgrade to go back to " + m.Version + " (edgecore.exe rollback restores the version before the last upgrade, with its configuration and database)",
		}
	}
	return nil
}

// Compare orders two semantic versions (v0.1.0, v0.2.0-rc.1): -1, 0 or +1.
func Compare(a, b string) (int, error) {
	va, err := version.ParseSemantic(a)
	if err != nil {
		return 0, fmt.Errorf("version %q is not a semantic version such as v0.2.0", a)
	}
	return va.Compare(b)
}

// peMachines and elfMachines name the architectures a binary header
// declares, in Go's names.
var (
	peMachines = map[uint16]string{
		pe.IMAGE_FILE_MACHINE_AMD64: "amd64",
		pe.IMAGE_FILE_MACHINE_ARM64: "arm64",
		pe.IMAGE_FILE_MACHINE_I386:  "386",
	}
	elfMachines = map[elf.Machine]string{
		elf.EM_X86_64:  "amd64",
		elf.EM_AARCH64: "arm64",
		elf.EM_386:     "386",
	}
)

// CheckBinary checks that the executable at path is one for m's platform:
// its header (PE on Windows, ELF elsewhere) names m.Arch, and, when it is a
// Go program, the GOOS and GOARCH it was built with are m's. The manifest
// is only text; this is what makes a package labelled windows/amd64 with
// an arm64 binary inside fail here rather than at the service start.
func CheckBinary(path string, m Manifest) error {
	arch, err := headerArch(path, m.OS)
	if err != nil {
		return fmt.Errorf("%s: %w", m.Binary, err)
	}
	if arch != m.Arch {
		return fmt.Errorf("%s is built for %s, but the manifest says %s: the package was assembled wrongly", m.Binary, arch, m.Platform())
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		// Not a Go program (or stripped of its build information): the
		// header is all there is to check.
		return nil
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if goos, goarch := settings["GOOS"], settings["GOARCH"]; goos != "" && (goos != m.OS || goarch != m.Arch) {
		return fmt.Errorf("%s was built for %s/%s, but the manifest says %s: the package was assembled wrongly", m.Binary, goos, goarch, m.Platform())
	}
	return nil
}

func headerArch(path, goos string) (string, error) {
	if goos == "windows" {
		f, err := pe.Open(path)
		if err != nil {
			return "", fmt.Errorf("not a Windows executable: %w", err)
		}
		defer f.Close()
		if a, ok := peMachines[f.Machine]; ok {
			return a, nil
		}
		return fmt.Sprintf("machine %#x", f.Machine), nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("not an ELF executable for %s: %w", goos, err)
	}
	defer f.Close()
	if a, ok := elfMachines[f.Machine]; ok {
		return a, nil
	}
	return strings.ToLower(f.Machine.String()), nil
}
