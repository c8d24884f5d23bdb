package preflight

import (
	"os"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// SystemProbes are the probes of the running host, whose facts host holds
// (config.CurrentHost). ImagePlatforms asks the image's registry over HTTPS.
func SystemProbes(host config.Host) Probes {
	acls := protect.HostACLs()
	return Probes{
		Protect:           &acls,
		WindowsVersion:    windowsVersion,
		ContainersFeature: containersFeature,
		Elevated:          elevated,
		Processes:         proc.List,
		FreeDisk:          freeDisk,
		DiskSize:          diskSize,
		Exists:            exists,
		CRI:               criStatus,
		ReadDir:           readDirNames,
		ReadFile:          os.ReadFile,
		ImagePlatforms:    (&registryClient{}).platforms,
		Dial:              config.DialTCP,
		DialQUIC:          dialQUIC,
		Certificate:       readCertificate,
		Now:               time.Now,
		PodNetwork:        systemPodNetworkProbes(host),
	}
}
