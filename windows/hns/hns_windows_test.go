package hns

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"
)

// On a host without the Host Networking Service (Wine; Windows without
// the Containers feature) every HNS call fails before it touches anything,
// with the fix; forwarding, which is not HNS's, is not among them.
func TestWithoutHNSEveryCallSaysHowToGetIt(t *testing.T) {
	if hcn.V2ApiSupported() == nil {
		t.Skip("this host has the Host Networking Service: the calls would change its networks (the l2bridge steps are tested over recording fakes in internal/podnet and internal/join)")
	}
	c := New()
	_, e1 := c.NetworkByName("x")
	_, e2 := c.CreateNetwork(NetworkSpec{})
	_, e3 := c.EndpointByName("x")
	_, e4 := c.CreateEndpoint("id", EndpointSpec{})
	for i, err := range []error{e1, e2, c.DeleteNetwork("id"), e3, e4, c.AttachHost("id"), c.DeleteEndpoint("id")} {
		if err == nil || !strings.Contains(err.Error(), "Install-WindowsFeature -Name Containers") {
			t.Errorf("call %d without HNS: %v; want the fix", i, err)
		}
	}
}

// Forwarding reads an interface's IPv4 settings through the IP helper
// API (GetIpInterfaceEntry, with the row layout pinned to the C size):
// the loopback interface's, which every host has.
func TestForwardingReadsTheLoopbackInterface(t *testing.T) {
	i, err := New().Forwarding(netip.MustParseAddr("127.0.0.1"))
	if err != nil && strings.Contains(err.Error(), "has no GetIpInterfaceEntry") {
		// Every Windows since Vista has it. The error, not a panic, is
		// what the code owes a host without it.
		t.Skipf("Wine 8's iphlpapi.dll has no GetIpInterfaceEntry, so no interface's IPv4 settings can be read here (%v); the row's layout is pinned to the C size at compile time", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if i.Name == "" || i.Index <= 0 {
		t.Errorf("the loopback interface read back as %+v", i)
	}
	t.Logf("127.0.0.1 is on %q (index %d), forwarding %v", i.Name, i.Index, i.Forwarding)
}
