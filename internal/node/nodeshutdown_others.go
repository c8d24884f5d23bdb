//go:build !windows

package node

import "github.com/kubeedge-windows/edgecore/config"

// installNodeShutdown has nothing to install outside Windows: the Linux
// kubelet's node shutdown manager waits for systemd-logind's shutdown
// signal on its own, as upstream.
func installNodeShutdown(config.NodeShutdown) {}
