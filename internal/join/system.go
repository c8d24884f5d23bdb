package join

import (
	"context"
	"io"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
)

// System is everything join and reset do to the host or learn from it.
// The commands pass the real functions; tests pass fakes and check what
// was called.
type System struct {
	FS hostfs.FS
	// Reach reports whether cloudcore answers at host:port.
	Reach config.Reach
	// Elevated reports whether the process runs as an elevated
	// Administrator.
	Elevated func() (bool, error)
	// WriteConfig writes a new configuration file; it refuses to replace
	// an existing one.
	WriteConfig func(path string, data []byte) error
	// LoadConfig reads a configuration file as edgecore will at start-up,
	// with every check.
	LoadConfig func(path string) (*v1alpha2.EdgeCoreConfig, error)
	// RemoveToken blanks modules.edgeHub.token in a configuration file.
	RemoveToken func(path string) error
	// Protect reads and sets the owners and ACLs of the node's files
	// (protect.HostACLs).
	Protect protect.Host
	// Services is the service manager (deps.WindowsServices outside
	// tests); errors wrap the service package's sentinel errors
	// (service.ErrAlreadyInstalled, ErrNotInstalled, ErrAccessDenied, ...).
	Services deps.Services
	Clock    clock.Clock
	// Runtime is what installing the bundled container runtime does to
	// the host and learns from it; its Services are the ones above.
	Runtime runtimeinstall.Host
	// ImportImages imports the image archives of dirs that were not
	// imported yet into the containerd at the CRI endpoint
	// (images.ImportFolders).
	ImportImages func(ctx context.Context, out io.Writer, endpoint string, dirs []string) error
	// PodNet is the host as the pod network sees it, for the CNI
	// configuration join writes and reset removes.
	PodNet PodNetHost
	// Alive reports whether an edgecore process with this ID runs (an
	// earlier join whose record is found); nil counts none as running.
	Alive func(pid int) bool
}
