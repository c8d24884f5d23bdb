package cni

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Flags of GetAdaptersAddresses: DNS servers are all that is read.
const (
	gaaSkipUnicast   = 0x1
	gaaSkipAnycast   = 0x2
	gaaSkipMulticast = 0x4
	ifTypeLoopback   = 24
)

// HostResolvers returns the DNS servers of the host's connected adapters,
// in adapter order, for Options.HostDNS.
func HostResolvers() ([]string, error) {
	size := uint32(15 * 1024)
	for attempt := 0; attempt < 4; attempt++ {
		buf := make([]byte, size)
		first := (*windows.IpAdapterAddresses)(unsafe.Pointer(&buf[0]))
		err := windows.GetAdaptersAddresses(windows.AF_UNSPEC, gaaSkipUnicast|gaaSkipAnycast|gaaSkipMulticast, 0, first, &size)
		if errors.Is(err, windows.ERROR_BUFFER_OVERFLOW) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the host's DNS servers (GetAdaptersAddresses): %w", err)
		}
		var out []string
		for a := first; a != nil; a = a.Next {
			if a.OperStatus != windows.IfOperStatusUp || a.IfType == ifTypeLoopback {
				continue
			}
			for d := a.FirstDnsServerAddress; d != nil; d = d.Next {
				if ip := d.Address.IP(); ip != nil {
					out = appendNew(out, ip.String())
				}
			}
		}
		return out, nil
	}
	return nil, errors.New("read the host's DNS servers: the adapter list kept growing; try again")
}
