// Package cni writes and checks the CNI configuration that containerd on
// Windows hands to its network plugin: the "nat" plugin of
// windows-container-networking, or for an l2bridge network (routable pod
// addresses) its "sdnbridge" plugin or containernetworking's "win-bridge".
//
// The rules are plain data in, data out: the host's facts (its interfaces,
// its DNS servers, the content of a config file) come in as arguments, so
// the Windows rules are tested on any OS. HostNetworks and HostResolvers
// gather those facts on the real host.
package cni

// containerd's CNI directories on a host (%ProgramFiles%\containerd\cni\conf
// and \bin by default) are part of edgecore's layout: config.NewLayout.

// DefaultFileName is the name of containerd's own sample, so that writing
// ours replaces that sample and its traps. containerd on Windows loads only
// the first network config by file name (see PickConfFile).
const DefaultFileName = "0-containerd-nat.conf"

// NATInterfaceName is the host adapter Windows creates for the HNS network
// named "nat". The nat plugin reuses an existing network of that name with
// the subnet it already has, so a new config must match it.
const NATInterfaceName = "vEthernet (nat)"

// NetworkName is the CNI network name. Older releases of the plugin take the
// HNS network type from the name rather than from "type", so it stays "nat".
const NetworkName = "nat"
