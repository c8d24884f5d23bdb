package modules

import (
	"net"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
)

// The metaServer's listener opens only with upstream's authorization on,
// never on an unspecified address, and on Windows not at the dummy
// address (no dummy interface there), which would otherwise fail and stop
// the node. This test compiles only against the patched upstream
// (patches/0015).
func TestMetaServerListensOnlyWithAuthorization(t *testing.T) {
	var opened []string
	listen := func(network, addr string) (net.Listener, error) {
		opened = append(opened, network+" "+addr)
		return net.Listen("tcp", "127.0.0.1:0")
	}
	c, err := config.Sample(config.KindDefault, config.Host{GOOS: config.Windows})
	if err != nil {
		t.Fatal(err)
	}
	ms := c.Modules.MetaManager.MetaServer
	ms.Enable = true
	if _, err := metaServerListener(c, config.Windows, listen)(ms.Server); err == nil || !strings.Contains(err.Error(), "plain HTTP") {
		t.Fatalf("without requireAuthorization: %v", err)
	}
	c.FeatureGates = map[string]bool{config.RequireAuthorizationGate: true}
	for goos, dummyServed := range map[string]bool{config.Windows: false, config.Linux: true} {
		opened = nil
		l := metaServerListener(c, goos, listen)
		for _, addr := range []string{"0.0.0.0:10550", "[::]:10550", ":10550"} {
			if _, err := l(addr); err == nil || !strings.Contains(err.Error(), "every interface") {
				t.Errorf("%s %s: %v", goos, addr, err)
			}
		}
		got, err := l(ms.Server)
		if err != nil || got == nil {
			t.Fatalf("%s: the server's address: %v", goos, err)
		}
		got.Close()
		d, err := l(ms.DummyServer)
		if err != nil {
			t.Fatalf("%s: the dummy address: %v", goos, err)
		}
		if (d != nil) != dummyServed {
			t.Errorf("%s: the dummy address served %v, want %v", goos, d != nil, dummyServed)
		}
		if d != nil {
			d.Close()
		}
		if len(opened) != 1+map[bool]int{true: 1}[dummyServed] || opened[0] != "tcp "+ms.Server {
			t.Errorf("%s: opened %v", goos, opened)
		}
	}
}
