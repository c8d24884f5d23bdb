package preflight

import (
	"os"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// systemPodNetworkProbes read this host's config.toml and cni-config's
// record (through fsys) at their places in the node's layout, and ask HNS
// (which answers hns.ErrNotWindows off Windows, giving WARN rows).
func systemPodNetworkProbes(layout config.Layout, fsys hostfs.FS) *PodNetworkProbes {
	return &PodNetworkProbes{
		ContainerdConfig: func() (string, []byte, error) {
			data, err := os.ReadFile(layout.ContainerdConfigFile)
			return layout.ContainerdConfigFile, data, err
		},
		State: func() (podnet.State, bool, error) {
			return podnet.ReadState(fsys, podnet.StateFile(layout))
		},
		HNS: hns.New(),
	}
}
