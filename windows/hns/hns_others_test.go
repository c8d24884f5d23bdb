//go:build !windows

package hns

import (
	"errors"
	"net/netip"
	"testing"
)

// Off Windows every call says that HNS is missing, so that cni-config and
// reset --network fail with that rather than half-work, and preflight
// reports "could not check".
func TestEveryCallNeedsWindows(t *testing.T) {
	c := New()
	a := netip.MustParseAddr("10.244.2.2")
	_, e1 := c.NetworkByName("x")
	_, e2 := c.CreateNetwork(NetworkSpec{})
	_, e3 := c.EndpointByName("x")
	_, e4 := c.CreateEndpoint("id", EndpointSpec{})
	_, e5 := c.Forwarding(a)
	_, e6 := c.LoadBalancing()
	_, e7 := c.LoadBalancers()
	_, e8 := c.NetworkEndpoints("id")
	for i, err := range []error{e1, e2, c.DeleteNetwork("id"), e3, e4, c.AttachHost("id"), c.DeleteEndpoint("id"), e5, c.EnableForwarding(a),
		e6, e7, c.DeleteLoadBalancer("id"), e8} {
		if !errors.Is(err, ErrNotWindows) {
			t.Errorf("call %d: %v", i, err)
		}
	}
}

func TestIsType(t *testing.T) {
	n := Network{Type: "l2bridge"}
	if !n.IsType(TypeL2Bridge) || n.IsType("NAT") {
		t.Error("HNS network types compare without regard to case")
	}
}
