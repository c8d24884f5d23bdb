package config

import (
	"strings"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// Hostile and mistyped values of every IP, CIDR, port, address and path
// field: each is refused with the field, the value and the fix, and the
// sample's own values pass.
func TestFieldValuesWindowsAndTheKubeletCannotUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *v1alpha2.EdgeCoreConfig)
		// want are fragments of the one error: field, value, fix.
		want []string
	}{
		{"nodeIP not an IP", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.NodeIP = "192.168.1.300" },
			[]string{"modules.edged.nodeIP", `"192.168.1.300"`, "not an IP address", "such as 192.168.1.20"}},
		{"nodeIP a host name", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.NodeIP = "edge-1.local" },
			[]string{"modules.edged.nodeIP", "edge-1.local"}},
		{"kubelet address with a port", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.TailoredKubeletConfig.Address = "0.0.0.0:10250" },
			[]string{"modules.edged.tailoredKubeletConfig.address", "0.0.0.0:10250", "0.0.0.0 to serve on every interface"}},
		{"clusterDNS", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.Edged.TailoredKubeletConfig.ClusterDNS = []string{"10.96.0.10", "kube-dns"}
		}, []string{"modules.edged.tailoredKubeletConfig.clusterDNS[1]", `"kube-dns"`, "such as 10.96.0.10"}},
		{"podCIDR without prefix", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.TailoredKubeletConfig.PodCIDR = "10.244.2.0" },
			[]string{"modules.edged.tailoredKubeletConfig.podCIDR", "10.244.2.0", "address/prefix"}},
		{"podCIDR prefix too long", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.TailoredKubeletConfig.PodCIDR = "10.244.2.0/33" },
			[]string{"podCIDR", "10.244.2.0/33"}},
		{"readOnlyPort too high", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.TailoredKubeletConfig.ReadOnlyPort = 70000 },
			[]string{"modules.edged.tailoredKubeletConfig.readOnlyPort", "70000", "between 1 and 65535"}},
		{"readOnlyPort negative", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.TailoredKubeletConfig.ReadOnlyPort = -1 },
			[]string{"readOnlyPort", "-1"}},
		{"httpServer http", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.EdgeHub.HTTPServer = "http://192.168.1.10:10002" },
			[]string{"modules.edgeHub.httpServer", "http://192.168.1.10:10002", "https://"}},
		{"httpServer without port", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.EdgeHub.HTTPServer = "https://192.168.1.10" },
			[]string{"modules.edgeHub.httpServer", "the port is missing"}},
		{"httpServer port 0", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.EdgeHub.HTTPServer = "https://192.168.1.10:0" },
			[]string{"modules.edgeHub.httpServer", `the port "0"`}},
		{"httpServer with credentials", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.EdgeHub.HTTPServer = "https://u:p@192.168.1.10:10002" },
			[]string{"modules.edgeHub.httpServer"}},
		{"websocket server port out of range", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.WebSocket.Enable = true
			c.Modules.EdgeHub.WebSocket.Server = "192.168.1.10:100000"
		}, []string{"modules.edgeHub.websocket.server", "192.168.1.10:100000", "between 1 and 65535"}},
		{"websocket server without port", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.WebSocket.Enable = true
			c.Modules.EdgeHub.WebSocket.Server = "192.168.1.10"
		}, []string{"modules.edgeHub.websocket.server", "not host:port"}},
		{"websocket IPv6 without brackets", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.WebSocket.Enable = true
			c.Modules.EdgeHub.WebSocket.Server = "fd00::1:10000"
		}, []string{"websocket.server", "brackets"}},
		{"websocket host with a space", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.WebSocket.Enable = true
			c.Modules.EdgeHub.WebSocket.Server = "cloud core:10000"
		}, []string{"websocket.server", "neither an IP address nor a host name"}},
		{"quic server", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.Quic.Enable = true
			c.Modules.EdgeHub.WebSocket.Enable = false
			c.Modules.EdgeHub.Quic.Server = ":10001"
		}, []string{"modules.edgeHub.quic.server", "the host is missing"}},
		{"mqtt server scheme", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EventBus.Enable = true
			c.Modules.EventBus.MqttServerExternal = "mqtt://127.0.0.1:1883"
		}, []string{"modules.eventBus.mqttServerExternal", "tcp://"}},
		{"metaServer dummy host name", func(c *v1alpha2.EdgeCoreConfig) {
			authorizedMetaServer(c)
			c.Modules.MetaManager.MetaServer.DummyServer = "dummy:10550"
		}, []string{"modules.metaManager.metaServer.dummyServer", `"dummy" is not an IP address`}},
		{"serviceBus port", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.ServiceBus.Enable = true
			c.Modules.ServiceBus.Port = 0
		}, []string{"modules.serviceBus.port", "between 1 and 65535"}},
		{"serviceBus server", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.ServiceBus.Enable = true
			c.Modules.ServiceBus.Server = "127.0.0.1:9060"
		}, []string{"modules.serviceBus.server", "not an IP address"}},
		{"edgeStream server", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeStream.Enable = true
			c.Modules.EdgeStream.TunnelServer = "192.168.1.10:-1"
		}, []string{"modules.edgeStream.server", "192.168.1.10:-1"}},
		// Paths: characters and names Windows does not store.
		{"database with a colon", func(c *v1alpha2.EdgeCoreConfig) { c.DataBase.DataSource = `C:\var\lib\kubeedge\edge:core.db` },
			[]string{"database.dataSource", `edge:core.db`, `Windows does not allow ':'`, `rename it, for example to C:\var\lib\kubeedge\edgecore.db`}},
		{"root directory a device", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.RootDirectory = `C:\var\lib\NUL` },
			[]string{"modules.edged.rootDirectory", `"C:\\var\\lib\\NUL"`, "NUL is a device name on Windows", `C:\var\lib\kubelet`}},
		{"key file COM1.key", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.TLSPrivateKeyFile = `C:\etc\kubeedge\certs\COM1.key`
		},
			[]string{"modules.edgeHub.tlsPrivateKeyFile", "COM1 is a device name"}},
		{"pod logs with a wildcard", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.Edged.TailoredKubeletConfig.PodLogsDir = `C:\var\log\pods*`
		},
			[]string{"modules.edged.tailoredKubeletConfig.podLogsDir", `'*'`}},
		{"static pods with a pipe", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.Edged.TailoredKubeletConfig.StaticPodPath = `C:\etc\kubeedge\manifests|x`
		}, []string{"staticPodPath", `'|'`}},
		{"CA with a control character", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.TLSCAFile = "C:\\etc\\kubeedge\\ca\\root\x07CA.crt"
		},
			[]string{"modules.edgeHub.tlsCaFile", "control character U+0007"}},
		{"quotes and angle brackets", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.RootDirectory = `C:\var\"lib"\<kubelet>` },
			[]string{"modules.edged.rootDirectory", `'"'`}},
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

// The values the samples and cloudcore's defaults use, host names and
// IPv6 included, pass.
func TestFieldValuesThatPass(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.Edged.TailoredKubeletConfig.ClusterDNS = []string{"10.96.0.10", "fd00::10"}
	c.Modules.Edged.TailoredKubeletConfig.PodCIDR = "10.244.2.0/24"
	c.Modules.EdgeHub.HTTPServer = "https://cloudcore.example.com:10002"
	c.Modules.EdgeHub.WebSocket.Enable = true
	c.Modules.EdgeHub.WebSocket.Server = "[fd00::1]:10000"
	c.Modules.EventBus.Enable = true
	authorizedMetaServer(c)
	c.Modules.ServiceBus.Enable = true
	c.Modules.EdgeStream.Enable = true
	c.Modules.EdgeStream.TunnelServer = "cloudcore:10004"
	c.Modules.Edged.RootDirectory = `D:\kube let\données`
	Normalize(c, Windows)
	if errs := validateAll(c, Windows); len(errs) > 0 {
		t.Errorf("refused: %v", errs)
	}
	lc, err := Sample(KindDefault, testHost(Linux))
	if err != nil {
		t.Fatal(err)
	}
	if errs := validateAll(lc, Linux); len(errs) > 0 {
		t.Errorf("the Linux sample is refused: %v", errs)
	}
}

// A URL with a user name and password is refused, and the error, which is
// printed, logged and sent in job statuses, never quotes the credentials.
func TestURLFieldErrorsNeverShowCredentials(t *testing.T) {
	for name, set := range map[string]func(c *v1alpha2.EdgeCoreConfig, v string){
		"httpServer": func(c *v1alpha2.EdgeCoreConfig, v string) { c.Modules.EdgeHub.HTTPServer = v },
		"mqttServerExternal": func(c *v1alpha2.EdgeCoreConfig, v string) {
			c.Modules.EventBus.Enable = true
			c.Modules.EventBus.MqttServerExternal = v
		},
	} {
		for _, v := range []string{"https://alice:s3cr3t@192.168.1.10:10002", "tcp://alice:s3cr3t@192.168.1.10:1883", "https://alice:s3cr3t@192.168.1.10"} {
			c, err := Sample(KindDefault, testHost(Windows))
			if err != nil {
				t.Fatal(err)
			}
			set(c, v)
			Normalize(c, Windows)
			errs := validateAll(c, Windows)
			if len(errs) == 0 {
				t.Errorf("%s=%s accepted", name, v)
				continue
			}
			text := (&InvalidError{What: "config file x", Errs: errs}).Error()
			if strings.Contains(text, "s3cr3t") || strings.Contains(text, "alice") || !strings.Contains(text, "***@192.168.1.10") {
				t.Errorf("%s=%s: %s", name, v, text)
			}
		}
	}
}
