package preflight

import (
	"os"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// SystemProbes are the probes of the running host: hostprobe's, and those
// only preflight asks. ImagePlatforms asks the image's registry over HTTPS.
func SystemProbes() Probes {
	acls := protect.HostACLs()
	host := hostprobe.System()
	return Probes{
		Protect:           &acls,
		WindowsVersion:    host.WindowsVersion,
		ContainersFeature: host.ContainersFeature,
		Elevated:          host.Elevated,
		Processes:         proc.List,
		FreeDisk:          host.FreeDisk,
		DiskSize:          host.DiskSize,
		Exists:            exists,
		CRI:               host.CRI,
		ReadDir:           readDirNames,
		ReadFile:          os.ReadFile,
		ImagePlatforms:    (&registryClient{}).platforms,
		Dial:              config.DialTCP,
		DialQUIC:          dialQUIC,
		Certificate:       readCertificate,
		Now:               time.Now,
		PodNetwork:        systemPodNetworkProbes(),
	}
}
