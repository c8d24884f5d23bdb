package hns

import (
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Forwarding on an interface is the "Forwarding" of Get-NetIPInterface
// (netsh interface ipv4 set interface ... forwarding=enabled): packets that
// arrive on it for another host are routed on. The pods' gateway is the
// host endpoint, so it and the host's own adapter must forward, or pod
// traffic to other hosts stops at the host.

var (
	iphlpapi                = windows.NewLazySystemDLL("iphlpapi.dll")
	procGetIpInterfaceEntry = iphlpapi.NewProc("GetIpInterfaceEntry")
	procSetIpInterfaceEntry = iphlpapi.NewProc("SetIpInterfaceEntry")
)

// mibIPInterfaceRow is MIB_IPINTERFACE_ROW (netioapi.h). Only Family,
// InterfaceIndex, ForwardingEnabled and SitePrefixLength are used; the rest
// is there for the layout, which the constants below pin to the C size.
type mibIPInterfaceRow struct {
	Family                               uint16
	InterfaceLuid                        uint64
	InterfaceIndex                       uint32
	MaxReassemblySize                    uint32
	InterfaceIdentifier                  uint64
	MinRouterAdvertisementInterval       uint32
	MaxRouterAdvertisementInterval       uint32
	AdvertisingEnabled                   uint8
	ForwardingEnabled                    uint8
	WeakHostSend                         uint8
	WeakHostReceive                      uint8
	UseAutomaticMetric                   uint8
	UseNeighborUnreachabilityDetection   uint8
	ManagedAddressConfigurationSupported uint8
	OtherStatefulConfigurationSupported  uint8
	AdvertiseDefaultRoute                uint8
	RouterDiscoveryBehavior              uint32
	DadTransmits                         uint32
	BaseReachableTime                    uint32
	RetransmitTime                       uint32
	PathMtuDiscoveryTimeout              uint32
	LinkLocalAddressBehavior             uint32
	LinkLocalAddressTimeout              uint32
	ZoneIndices                          [16]uint32
	SitePrefixLength                     uint32
	Metric                               uint32
	NlMtu                                uint32
	Connected                            uint8
	SupportsWakeUpPatterns               uint8
	SupportsNeighborDiscovery            uint8
	SupportsRouterDiscovery              uint8
	ReachableTime                        uint32
	TransmitOffload                      uint8 // NL_INTERFACE_OFFLOAD_ROD: one byte of bit fields
	ReceiveOffload                       uint8
	DisableDefaultRoutes                 uint8
}

// sizeof(MIB_IPINTERFACE_ROW) is 168 on 64-bit Windows; either constant
// overflows, and the build fails, if the layout above is off.
const (
	_ = uint(unsafe.Sizeof(mibIPInterfaceRow{}) - 168)
	_ = uint(168 - unsafe.Sizeof(mibIPInterfaceRow{}))
)

func ipInterface(addr netip.Addr) (Interface, mibIPInterfaceRow, error) {
	iface, err := interfaceAppearing(addr)
	if err != nil {
		return Interface{}, mibIPInterfaceRow{}, err
	}
	// A host whose iphlpapi.dll lacks the call (Wine 8's does) gets an
	// error rather than the panic of calling a procedure not found.
	if err := procGetIpInterfaceEntry.Find(); err != nil {
		return Interface{}, mibIPInterfaceRow{}, fmt.Errorf("read the IPv4 settings of %q: this host's IP helper API has no GetIpInterfaceEntry (%v)", iface.Name, err)
	}
	row := mibIPInterfaceRow{Family: windows.AF_INET, InterfaceIndex: uint32(iface.Index)}
	if rc, _, _ := procGetIpInterfaceEntry.Call(uintptr(unsafe.Pointer(&row))); rc != 0 {
		return Interface{}, row, fmt.Errorf("read the IPv4 settings of %q (GetIpInterfaceEntry): %w", iface.Name, syscall.Errno(rc))
	}
	return Interface{Name: iface.Name, Index: iface.Index, Forwarding: row.ForwardingEnabled != 0}, row, nil
}

// Forwarding returns the interface that has addr and whether it forwards.
func (Client) Forwarding(addr netip.Addr) (Interface, error) {
	i, _, err := ipInterface(addr)
	return i, err
}

// EnableForwarding turns forwarding on for the interface that has addr.
func (Client) EnableForwarding(addr netip.Addr) error {
	i, row, err := ipInterface(addr)
	if err != nil || i.Forwarding {
		return err
	}
	row.ForwardingEnabled = 1
	// SetIpInterfaceEntry refuses an IPv4 row whose SitePrefixLength is
	// not 0, which GetIpInterfaceEntry may have filled in.
	row.SitePrefixLength = 0
	if err := procSetIpInterfaceEntry.Find(); err != nil {
		return fmt.Errorf("enable forwarding on %q: this host's IP helper API has no SetIpInterfaceEntry (%v)", i.Name, err)
	}
	if rc, _, _ := procSetIpInterfaceEntry.Call(uintptr(unsafe.Pointer(&row))); rc != 0 {
		return fmt.Errorf("enable forwarding on %q (SetIpInterfaceEntry): %w", i.Name, syscall.Errno(rc))
	}
	return nil
}
