package cni

// CNIVersion is the oldest version every release of the nat plugin accepts;
// the early releases that containerd 1.6 bundles know no other.
const CNIVersion = "0.2.0"

// netConf is the file cni-config writes. Field order is the order in the
// file, which the golden files pin.
type netConf struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	// Master is not read by current releases of the plugin; it is kept
	// because containerd's sample and older releases carry it.
	Master       string       `json:"master"`
	IPAM         ipam         `json:"ipam"`
	DNS          dns          `json:"dns"`
	Capabilities capabilities `json:"capabilities"`
}

// ipam carries the gateway only as the first route's "gw": that is the one
// place the nat plugin looks for it, and without it the plugin picks the
// first address of the subnet.
type ipam struct {
	Subnet string  `json:"subnet"`
	Routes []route `json:"routes"`
}

type route struct {
	GW string `json:"gw"`
}

type dns struct {
	Nameservers []string `json:"nameservers"`
}

// capabilities has no "dns". That capability makes the plugin use the DNS
// servers the runtime passes for each pod instead of the nameservers here,
// and without clusterDNS edged passes 127.0.0.1 (its answer to the empty
// resolvConf that is the Windows default): the container asks itself and no
// name resolves.
type capabilities struct {
	PortMappings bool `json:"portMappings"`
}
