package preflight

import (
	"os"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/envcheck"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// SystemProbes are the probes of the running host, d's: its host probes,
// ACLs and service manager, and those only preflight asks.
// ImagePlatforms asks the image's registry over HTTPS.
func SystemProbes(d *deps.Dependencies) Probes {
	acls := d.ACLs
	hp := d.Probes
	programs := envcheck.OSHost(acls)
	return Probes{
		Programs:          &programs,
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
		ReadSubdirs:       readSubdirs,
		ImagePlatforms:    (&registryClient{}).platforms,
		ImagePresent:      hostprobe.CRIImagePresent,
		Registry:          probeRegistry,
		Dial:              config.DialTCP,
		DialQUIC:          dialQUIC,
		Certificate:       readCertificate,
		Now:               time.Now,
		PodNetwork:        systemPodNetworkProbes(d.Layout, d.FS),
		Services:          SystemServicesProbes(),
		Service:           d.Services.Query,
	}
}
