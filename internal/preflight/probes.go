package preflight

import (
	"github.com/kubeedge-windows/edgecore/config/registries"

	"context"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/envcheck"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Probes gather the facts the checks judge. A nil probe gives a WARN row
// saying the check was not made. SystemProbes returns the real ones.
type Probes struct {
	WindowsVersion    func() (hostprobe.WindowsVersion, error)
	ContainersFeature func() (bool, error)
	Elevated          func() (bool, error)
	// Processes lists running processes (proc.List); a process whose name
	// cannot be read has an empty Name.
	Processes func() ([]proc.Process, error)
	// Programs tells what a process named like a kubelet is: a
	// service's, a program only administrators may change, or a user's
	// (envcheck.OSHost).
	Programs *envcheck.Host
	// FreeDisk is the space available to this user on the volume of dir,
	// which exists.
	FreeDisk func(dir string) (uint64, error)
	// DiskSize is the size of the volume of dir, which exists.
	DiskSize func(dir string) (uint64, error)
	// Exists reports whether a file or directory exists.
	Exists func(path string) (bool, error)
	// CRI asks the runtime at endpoint for Version and Status.
	CRI func(ctx context.Context, endpoint string) (hostprobe.CRIStatus, error)
	// ReadDir lists the names of the files in dir.
	ReadDir  func(dir string) ([]string, error)
	ReadFile func(path string) ([]byte, error)
	// ReadSubdirs lists the names of the folders in dir.
	ReadSubdirs func(dir string) ([]string, error)
	// ImagePlatforms lists the platforms an image reference offers.
	ImagePlatforms func(ctx context.Context, image string) ([]Platform, error)
	// ImagePresent asks the runtime at endpoint whether it holds image
	// (hostprobe.CRIImagePresent).
	ImagePresent func(ctx context.Context, endpoint, image string) (bool, error)
	// Dial opens and closes a TCP connection to address (config.DialTCP).
	Dial func(ctx context.Context, address string) error
	// DialQUIC completes a QUIC handshake with address and closes the
	// session: cloudcore's QUIC port answers on UDP only.
	DialQUIC func(ctx context.Context, address string) error
	// Certificate reads the validity window of the first certificate in a
	// PEM file; an error wrapping fs.ErrNotExist means there is no file.
	Certificate func(path string) (Validity, error)
	Now         func() time.Time
	// PodNetwork checks what cni-config set up; nil gives no such rows.
	PodNetwork *PodNetworkProbes
	// Services checks what Services at the node need.
	Services *ServicesProbes
	// Protect reads the owners and ACLs of the node's files
	// (protect.HostACLs); preflight never changes them.
	Protect *protect.Host
	// Registry asks a registry endpoint's API root over TLS with its CA
	// and client certificate (probeRegistry).
	Registry func(ctx context.Context, e registries.Endpoint) error
	// Service reads an installed service's state and configuration
	// (service.Query); a missing service is a Status with Installed
	// false.
	Service func(name string) (service.Status, error)
}

// Platform is one entry of an image index, or the platform of a single
// image.
type Platform struct {
	OS           string
	Architecture string
	OSVersion    string
	Variant      string
}

func (p Platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	if p.OSVersion != "" {
		s += " " + p.OSVersion
	}
	return s
}

// Validity is a certificate's subject and validity window.
type Validity struct {
	Subject   string
	NotBefore time.Time
	NotAfter  time.Time
}
