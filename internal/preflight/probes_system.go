package preflight

import (
	"os"
	"time"
)

// SystemProbes are the probes of the running host. ImagePlatforms asks the
// image's registry over HTTPS.
func SystemProbes() Probes {
	return Probes{
		WindowsVersion:    windowsVersion,
		ContainersFeature: containersFeature,
		Elevated:          elevated,
		Processes:         processes,
		FreeDisk:          freeDisk,
		Exists:            exists,
		CRI:               criStatus,
		ReadDir:           readDirNames,
		ReadFile:          os.ReadFile,
		ImagePlatforms:    (&registryClient{}).platforms,
		Dial:              dialTCP,
		Certificate:       readCertificate,
		Now:               time.Now,
	}
}
