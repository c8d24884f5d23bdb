// Package config loads, checks and generates edgecore configuration. Every
// decision takes the target operating system as an argument, so that the
// Windows rules are exercised by tests on any build host.
package config

import "github.com/kubeedge-windows/edgecore/config/ospath"

// OS names as runtime.GOOS spells them.
const (
	Windows = ospath.Windows
	Linux   = "linux"
)

// ExecutableName is how the operator types the command on goos.
func ExecutableName(goos string) string {
	if goos == Windows {
		return "edgecore.exe"
	}
	return "edgecore"
}
