package config

import (
	"regexp"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Rewrite records one value changed while loading a configuration, so that
// start-up can log what it did instead of changing settings silently.
type Rewrite struct {
	Field, From, To string
}

// Normalize rewrites the OS-dependent strings of c into their canonical form
// for goos and returns what it changed. On Windows that means drive-letter
// paths with backslashes and npipe:// endpoints; elsewhere nothing changes.
func Normalize(c *v1alpha2.EdgeCoreConfig, goos string) []Rewrite {
	if goos != Windows {
		return nil
	}
	var rewrites []Rewrite
	for _, f := range stringFields(c) {
		var to string
		switch f.kind {
		case kindPath:
			to = WindowsPath(*f.ptr)
		case kindEndpoint, kindSocket:
			if name, ok := pipeName(*f.ptr); ok {
				to = "npipe://./pipe/" + name
			} else if f.kind == kindSocket {
				to = WindowsPath(*f.ptr)
			} else {
				to = *f.ptr
			}
		}
		if to != *f.ptr {
			rewrites = append(rewrites, Rewrite{Field: f.name, From: *f.ptr, To: to})
			*f.ptr = to
		}
	}
	// cgroupDriver means nothing to the Windows kubelet; a value in the file
	// is a leftover of a Linux configuration and is dropped, not refused.
	if k := kubeletConfig(c); k != nil && k.CgroupDriver != "" {
		rewrites = append(rewrites, Rewrite{Field: "modules.edged.tailoredKubeletConfig.cgroupDriver", From: k.CgroupDriver, To: ""})
		k.CgroupDriver = ""
	}
	return rewrites
}

func kubeletConfig(c *v1alpha2.EdgeCoreConfig) *v1alpha2.TailoredKubeletConfiguration {
	if c.Modules == nil || c.Modules.Edged == nil {
		return nil
	}
	return c.Modules.Edged.TailoredKubeletConfig
}

// WindowsPath puts p into canonical Windows form: forward slashes become
// backslashes, runs of separators collapse (YAML users often double every
// backslash), "." and ".." are resolved as Windows resolves them, the drive
// letter is upper case, a drive-less absolute path gets the system drive
// (DefaultSystemDrive: Normalize knows the OS, not the host) and a trailing
// separator goes; device-path prefixes and the trailing dots and spaces of
// names go as ospath.Clean says. UNC paths keep their leading pair.
// Relative paths stay relative so that validation can refuse them by name.
func WindowsPath(p string) string {
	if p == "" {
		return p
	}
	// Clean first: \??\C:\x is a drive path, which a test of p's first
	// characters would take for a drive-less one.
	c := ospath.Clean(Windows, p)
	if strings.HasPrefix(c, `\`) && !strings.HasPrefix(c, `\\`) {
		// Rooted but neither a drive nor a UNC path.
		c = DefaultSystemDrive + c
	}
	return c
}

var pipePath = regexp.MustCompile(`(?i)^\\+\.\\pipe\\(.+)$`)

// pipeName recognises the spellings of a local named pipe: npipe://./pipe/x,
// npipe:////./pipe/x (Docker's), \\.\pipe\x and //./pipe/x.
func pipeName(s string) (string, bool) {
	rest := s
	if strings.HasPrefix(strings.ToLower(rest), "npipe:") {
		rest = rest[len("npipe:"):]
	}
	rest = strings.ReplaceAll(rest, "/", `\`)
	if !strings.HasPrefix(rest, `\`) {
		// npipe://./pipe/x leaves ".\pipe\x" after the scheme's slashes
		// are gone only when the slashes were there; ".\pipe\x" alone is
		// a relative file path.
		return "", false
	}
	m := pipePath.FindStringSubmatch(rest)
	if m == nil {
		return "", false
	}
	return m[1], true
}
