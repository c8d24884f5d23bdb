package config

import (
	"strings"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// Every host:port and URL field judges its host with hostProblem: one
// that ends in a number is an IPv4 address or refused, naming the field,
// the value and the fix.
func TestHostFieldsRefuseNumbersThatAreNoIPv4Address(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *v1alpha2.EdgeCoreConfig)
		want []string
	}{
		{"websocket server", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.WebSocket.Enable = true
			c.Modules.EdgeHub.WebSocket.Server = "999.1.1.1:10000"
		}, []string{`modules.edgeHub.websocket.server: Invalid value: "999.1.1.1:10000": 999.1.1.1 is not an IPv4 address (each of the four numbers is 0 to 255`,
			"fix: use cloudcore's hub, such as 192.168.1.10:10000"}},
		{"quic server, three numbers", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.Quic.Enable = true
			c.Modules.EdgeHub.WebSocket.Enable = false
			c.Modules.EdgeHub.Quic.Server = "1.2.3:10001"
		}, []string{"modules.edgeHub.quic.server", "1.2.3 is not an IPv4 address"}},
		{"httpServer with leading zeros", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.EdgeHub.HTTPServer = "https://01.02.03.04:10002" },
			[]string{"modules.edgeHub.httpServer", "01.02.03.04 is not an IPv4 address", "fix: use"}},
		{"mqtt server in hexadecimal", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EventBus.Enable = true
			c.Modules.EventBus.MqttServerExternal = "tcp://0x7f.0.0.1:1883"
		}, []string{"modules.eventBus.mqttServerExternal", "0x7f.0.0.1 is not an IPv4 address"}},
		{"dummy server, IP only", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.DummyServer = "169.254.30.300:10550"
		}, []string{"modules.metaManager.metaServer.dummyServer", "169.254.30.300 is not an IPv4 address"}},
		{"stream server ending in a number", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeStream.Enable = true
			c.Modules.EdgeStream.TunnelServer = "cloudcore.10:10004"
		}, []string{"modules.edgeStream.server", "a host name does not end in a number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Sample(KindDefault, testHost(Windows))
			if err != nil {
				t.Fatal(err)
			}
			tc.set(c)
			Normalize(c, Windows)
			errs := validateAll(c, Windows)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %v", len(errs), errs)
			}
			got := errs[0].Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestHostProblem(t *testing.T) {
	for _, tc := range []struct {
		host   string
		ipOnly bool
		want   string // a fragment of the problem, "" for none
	}{
		{"192.168.1.10", false, ""},
		{"0.0.0.0", true, ""},
		{"fd00::1", true, ""},
		{"cloudcore.example.com", false, ""},
		{"cloudcore.example.com.", false, ""},
		{"1host.example", false, ""},
		{"10.example", false, ""},
		{"999.1.1.1", false, "999.1.1.1 is not an IPv4 address"},
		{"999.1.1.1", true, "999.1.1.1 is not an IPv4 address"},
		{"1.2.3", false, "is not an IPv4 address"},
		{"1.2.3.4.5", false, "is not an IPv4 address"},
		{"01.02.03.04", false, "is not an IPv4 address"},
		{"2130706433", false, "is not an IPv4 address"},
		{"0x7f.1", false, "is not an IPv4 address"},
		{"host.0x", false, "is not an IPv4 address"},
		{"192.168.1.10.", false, "is not an IPv4 address"},
		{"cloudcore", true, `"cloudcore" is not an IP address`},
		{"cloud_core", false, "neither an IP address nor a host name"},
	} {
		got := hostProblem(tc.host, tc.ipOnly)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("hostProblem(%q, %v) = %q, want %q", tc.host, tc.ipOnly, got, tc.want)
		}
	}
}
