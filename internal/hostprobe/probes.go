// Package hostprobe reads facts of the running host that more than one
// command needs: the Windows build, the Containers feature, elevation, disk
// space and whether the container runtime answers. preflight judges them
// all; join asks for elevation, the upgrade agent for free disk, and the
// node waits for the runtime. Each fact is a function field, so that a
// consumer takes the one it needs and its tests pass a fake.
package hostprobe

import (
	"context"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

// Set is the probes of one host.
type Set struct {
	WindowsVersion    func() (WindowsVersion, error)
	ContainersFeature func() (bool, error)
	Elevated          func() (bool, error)
	// FreeDisk is the space available to this user on the volume of dir,
	// which exists.
	FreeDisk func(dir string) (uint64, error)
	// DiskSize is the size of the volume of dir, which exists.
	DiskSize func(dir string) (uint64, error)
	// CRI asks the runtime at endpoint for Version and Status, over a
	// connection made for the call and closed after it, once its server
	// is judged trusted (a *servertrust.RefusedError otherwise).
	CRI func(ctx context.Context, endpoint string) (CRIStatus, error)
}

// Host is the probes of the running host. main makes them once, in the
// process's dependencies (internal/deps), and every caller takes them from
// there.
func Host() Set {
	return Set{
		WindowsVersion:    windowsVersion,
		ContainersFeature: containersFeature,
		Elevated:          elevated,
		FreeDisk:          freeDisk,
		DiskSize:          diskSize,
		CRI:               CRIProbe(servertrust.OSHost()),
	}
}

// CRIProbe is the CRI probe judging each runtime's server by trust's
// rule (servertrust.OSHost on the host).
func CRIProbe(trust servertrust.Host) func(ctx context.Context, endpoint string) (CRIStatus, error) {
	return func(ctx context.Context, endpoint string) (CRIStatus, error) {
		return criStatus(ctx, endpoint, trust)
	}
}

// WindowsVersion is read from HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion.
type WindowsVersion struct {
	ProductName string
	Build       int
	// UBR is the update revision, the number after the dot in 17763.5458.
	UBR int
}
