package preflight

import (
	"os"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// SystemProbes are the probes of the running host, whose facts host holds
// (config.CurrentHost): hostprobe's, and those only preflight asks.
// ImagePlatforms asks the image's registry over HTTPS.
func SystemProbes(host config.Host) Probes {
	acls := protect.HostACLs()
	hp := hostprobe.System()
	return Probes{
		Protect:           &acls,
		WindowsVersion:    hp.WindowsVersion,
		ContainersFeature: hp.ContainersFeature,
		Elevated:          hp.Elevated,
		Processes:         proc.List,
		FreeDisk:          hp.FreeDisk,
		DiskSize:          hp.DiskSize,
		Exists:            exists,
		CRI:               hp.CRI,
		ReadDir:           readDirNames,
		ReadFile:          os.ReadFile,
		ImagePlatforms:    (&registryClient{}).platforms,
		ImagePresent:      hostprobe.CRIImagePresent,
		Dial:              config.DialTCP,
		DialQUIC:          dialQUIC,
		Certificate:       readCertificate,
		Now:               time.Now,
		PodNetwork:        systemPodNetworkProbes(host),
		Service:           service.Query,
	}
}
