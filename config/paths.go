// Package config loads, checks and generates edgecore configuration. Every
// decision takes the target operating system as an argument, so that the
// Windows rules are exercised by tests on any build host.
package config

import "strings"

// OS names as runtime.GOOS spells them.
const (
	Windows = "windows"
	Linux   = "linux"
)

// DefaultConfigFile is where edgecore looks for its configuration when
// --config is not given. Upstream builds it with path.Join and prints
// "c:\etc\kubeedge\config\/edgecore.yaml" on Windows.
func DefaultConfigFile(goos string) string {
	if goos == Windows {
		return `C:\etc\kubeedge\config\edgecore.yaml`
	}
	return "/etc/kubeedge/config/edgecore.yaml"
}

// ExecutableName is how the operator types the command on goos.
func ExecutableName(goos string) string {
	if goos == Windows {
		return "edgecore.exe"
	}
	return "edgecore"
}

// Dir returns the directory part of a path written for goos. It exists
// because path.Dir and filepath.Dir both give wrong answers for one of the
// two path styles when the binary runs on the other.
func Dir(goos, p string) string {
	seps := "/"
	if goos == Windows {
		seps = `\/`
	}
	i := strings.LastIndexAny(p, seps)
	switch {
	case i < 0:
		return "."
	case i == 0:
		return p[:1]
	case goos == Windows && i == 2 && p[1] == ':':
		return p[:3] // keep the root of "C:\x"
	}
	return p[:i]
}
