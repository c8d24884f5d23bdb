package config

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// hubConfig is a configuration whose edgeHub enables the protocols named
// and has the given servers.
func hubConfig(ws, quic bool, wsServer, quicServer, httpServer string) *v1alpha2.EdgeCoreConfig {
	return &v1alpha2.EdgeCoreConfig{Modules: &v1alpha2.Modules{EdgeHub: &v1alpha2.EdgeHub{
		Enable:     true,
		HTTPServer: httpServer,
		WebSocket:  &v1alpha2.EdgeHubWebSocket{Enable: ws, Server: wsServer},
		Quic:       &v1alpha2.EdgeHubQUIC{Enable: quic, Server: quicServer},
	}}}
}

func TestCloudEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *v1alpha2.EdgeCoreConfig
		// want is each endpoint as "name field address transport".
		want []string
		// errs are the lines the error must hold, one per malformed field.
		errs []string
	}{
		{"websocket", hubConfig(true, false, "192.0.2.10:10000", "192.0.2.10:10001", "https://192.0.2.10:10002"),
			[]string{"cloudcore websocket modules.edgeHub.websocket.server 192.0.2.10:10000 tcp",
				"cloudcore https modules.edgeHub.httpServer 192.0.2.10:10002 tcp"}, nil},
		{"quic", hubConfig(false, true, "192.0.2.10:10000", "cloud.example:10001", "https://cloud.example:10002"),
			[]string{"cloudcore quic modules.edgeHub.quic.server cloud.example:10001 quic",
				"cloudcore https modules.edgeHub.httpServer cloud.example:10002 tcp"}, nil},
		// edgehub's client factory tries websocket first.
		{"both enabled", hubConfig(true, true, "192.0.2.10:10000", "192.0.2.10:10001", "https://192.0.2.10:10002"),
			[]string{"cloudcore websocket modules.edgeHub.websocket.server 192.0.2.10:10000 tcp",
				"cloudcore https modules.edgeHub.httpServer 192.0.2.10:10002 tcp"}, nil},
		{"httpServer without port", hubConfig(true, false, "cloud.example:10000", "", "https://cloud.example"),
			[]string{"cloudcore websocket modules.edgeHub.websocket.server cloud.example:10000 tcp",
				"cloudcore https modules.edgeHub.httpServer cloud.example:443 tcp"}, nil},
		{"IPv6 httpServer without port", hubConfig(true, false, "[2001:db8::1]:10000", "", "https://[2001:db8::1]"),
			[]string{"cloudcore websocket modules.edgeHub.websocket.server [2001:db8::1]:10000 tcp",
				"cloudcore https modules.edgeHub.httpServer [2001:db8::1]:443 tcp"}, nil},
		{"http instead of https", hubConfig(true, false, "192.0.2.10:10000", "", "http://192.0.2.10:10002"),
			[]string{"cloudcore websocket modules.edgeHub.websocket.server 192.0.2.10:10000 tcp",
				"cloudcore https modules.edgeHub.httpServer  tcp"},
			[]string{`modules.edgeHub.httpServer: Invalid value: "http://192.0.2.10:10002": expected https://HOST:PORT with nothing after the port, for example https://192.168.1.10:10002`}},
		{"malformed URL", hubConfig(true, false, "192.0.2.10:10000", "", "https://192.0.2.10:10002:10003"),
			nil, []string{`modules.edgeHub.httpServer: Invalid value: "https://192.0.2.10:10002:10003": expected https://HOST:PORT`}},
		{"trailing slash", hubConfig(true, false, "192.0.2.10:10000", "", "https://192.0.2.10:10002/"),
			nil, []string{`modules.edgeHub.httpServer: Invalid value: "https://192.0.2.10:10002/": expected https://HOST:PORT with nothing after the port`}},
		{"URL with a path", hubConfig(true, false, "192.0.2.10:10000", "", "https://192.0.2.10:10002/edge.crt"),
			nil, []string{`modules.edgeHub.httpServer: Invalid value: "https://192.0.2.10:10002/edge.crt": expected https://HOST:PORT`}},
		{"host without scheme as httpServer", hubConfig(true, false, "192.0.2.10:10000", "", "192.0.2.10:10002"),
			nil, []string{`modules.edgeHub.httpServer: Invalid value: "192.0.2.10:10002"`}},
		{"port out of range", hubConfig(true, false, "192.0.2.10:10000", "", "https://192.0.2.10:70000"),
			nil, []string{`modules.edgeHub.httpServer: Invalid value: "https://192.0.2.10:70000"`}},
		{"websocket server with a scheme", hubConfig(true, false, "wss://192.0.2.10:10000", "", "https://192.0.2.10:10002"),
			[]string{"cloudcore websocket modules.edgeHub.websocket.server  tcp",
				"cloudcore https modules.edgeHub.httpServer 192.0.2.10:10002 tcp"},
			[]string{`modules.edgeHub.websocket.server: Invalid value: "wss://192.0.2.10:10000": expected HOST:PORT without a scheme, for example 192.168.1.10:10000`}},
		{"quic server without port", hubConfig(false, true, "", "192.0.2.10", "https://192.0.2.10:10002"),
			nil, []string{`modules.edgeHub.quic.server: Invalid value: "192.0.2.10": expected HOST:PORT without a scheme, for example 192.168.1.10:10001`}},
		{"spaces around the server", hubConfig(true, false, " 192.0.2.10:10000", "", "https://192.0.2.10:10002"),
			nil, []string{`modules.edgeHub.websocket.server: Invalid value: " 192.0.2.10:10000"`}},
		{"both empty", hubConfig(false, true, "", "", ""),
			[]string{"cloudcore quic modules.edgeHub.quic.server  quic", "cloudcore https modules.edgeHub.httpServer  tcp"},
			[]string{"modules.edgeHub.quic.server: Required value: cloudcore's address and hub port, for example 192.168.1.10:10001",
				"modules.edgeHub.httpServer: Required value: cloudcore's certificate server, for example https://192.168.1.10:10002"}},
		{"dotted numbers that are no IPv4 address", hubConfig(true, false, "999.1.1.1:10000", "", "https://1.2.3:10002"),
			nil, []string{`modules.edgeHub.websocket.server: Invalid value: "999.1.1.1:10000": 999.1.1.1 is not an IPv4 address (each of the four numbers is 0 to 255`,
				`modules.edgeHub.httpServer: Invalid value: "https://1.2.3:10002": 1.2.3 is not an IPv4 address`}},
		{"no protocol enabled", hubConfig(false, false, "192.0.2.10:10000", "", "https://192.0.2.10:10002"),
			nil, []string{"modules.edgeHub.websocket.enable: Invalid value: false: neither websocket nor quic is enabled"}},
		{"no edgeHub section", &v1alpha2.EdgeCoreConfig{Modules: &v1alpha2.Modules{}},
			nil, []string{"modules.edgeHub: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloud, err := CloudEndpoints(tc.cfg)
			if tc.want != nil {
				var got []string
				for _, e := range cloud.Endpoints() {
					got = append(got, strings.Join([]string{e.Name, e.Field, e.Address, e.Transport}, " "))
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("endpoints\n got %q\nwant %q", got, tc.want)
				}
			}
			if len(tc.errs) == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			var invalid *InvalidError
			if !errors.As(err, &invalid) || len(invalid.Errs) != len(tc.errs) {
				t.Fatalf("got %v, want an InvalidError with %d entries", err, len(tc.errs))
			}
			for i, want := range tc.errs {
				if got := invalid.Errs[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("error %d\n got %s\nwant %s…", i, got, want)
				}
			}
		})
	}
}

// The tunnel is an endpoint only while edgeStream is on, and a malformed
// server is named with its field like the hub's.
func TestCloudEndpointsTunnel(t *testing.T) {
	cfg := hubConfig(true, false, "192.0.2.10:10000", "", "https://192.0.2.10:10002")
	cfg.Modules.EdgeStream = &v1alpha2.EdgeStream{Enable: false, TunnelServer: "192.0.2.10:10004"}
	cloud, err := CloudEndpoints(cfg)
	if err != nil || cloud.Tunnel != nil || len(cloud.Endpoints()) != 2 {
		t.Errorf("edgeStream off: %+v, %v; want no tunnel endpoint", cloud, err)
	}
	cfg.Modules.EdgeStream.Enable = true
	cloud, err = CloudEndpoints(cfg)
	if err != nil || cloud.Tunnel == nil || cloud.Tunnel.Address != "192.0.2.10:10004" || cloud.Tunnel.Field != FieldTunnelServer ||
		len(cloud.Endpoints()) != 3 || cloud.Endpoints()[2].Name != "cloudcore stream" {
		t.Errorf("edgeStream on: %+v, %v", cloud, err)
	}
	for value, want := range map[string]string{
		"":                       "modules.edgeStream.server: Required value: cloudcore's address and stream tunnel port, for example 192.168.1.10:10004",
		"wss://192.0.2.10:10004": `modules.edgeStream.server: Invalid value: "wss://192.0.2.10:10004": expected HOST:PORT without a scheme, for example 192.168.1.10:10004`,
	} {
		cfg.Modules.EdgeStream.TunnelServer = value
		_, err := CloudEndpoints(cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("server %q: %v; want %s", value, err, want)
		}
	}
}

// What join writes is what CloudEndpoints reads back, for either protocol.
func TestCloudEndpointsOfJoinConfig(t *testing.T) {
	o := joinOpts()
	o.HubProtocol, o.CloudCoreIPPort, o.CertPort = HubQUIC, "cloud.example.com:30001", "30002"
	c, _, err := JoinConfig(o, testHost(Windows), nil)
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := CloudEndpoints(c)
	if err != nil || cloud.Hub.Address != "cloud.example.com:30001" || cloud.Hub.Transport != TransportQUIC ||
		cloud.Certificates.Address != "cloud.example.com:30002" {
		t.Errorf("%+v, %v", cloud, err)
	}
}

// QUIC answers on UDP only: `config --hub-protocol quic` must not refuse
// because a TCP connection to the QUIC port fails; the certificate port is
// still checked.
func TestJoinConfigReachesOnlyTCPPorts(t *testing.T) {
	o := joinOpts()
	o.HubProtocol, o.CloudCoreIPPort = HubQUIC, "192.168.50.10:10001"
	var asked []string
	_, _, err := JoinConfig(o, testHost(Windows), func(addr string) error {
		asked = append(asked, addr)
		if addr == "192.168.50.10:10001" {
			return errors.New("connection refused")
		}
		return nil
	})
	if err != nil || strings.Join(asked, " ") != "192.168.50.10:10002 192.168.50.10:10004" {
		t.Errorf("asked %v, err %v; want only the certificate and tunnel ports asked", asked, err)
	}

	_, _, err = JoinConfig(o, testHost(Windows), func(addr string) error { return errors.New("connection refused") })
	if err == nil || !strings.Contains(err.Error(), `--certport: Invalid value: "192.168.50.10:10002": cloudcore does not answer (connection refused)`) {
		t.Errorf("unreachable certificate port: %v", err)
	}
}

func TestDialReach(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if c, err := lis.Accept(); err == nil {
			c.Close()
		}
	}()
	reach := DialReach(5 * time.Second)
	if err := reach(lis.Addr().String()); err != nil {
		t.Errorf("listening port: %v", err)
	}
	addr := lis.Addr().String()
	lis.Close()
	if err := reach(addr); err == nil {
		t.Errorf("closed port %s reached", addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := DialTCP(ctx, addr); err == nil {
		t.Error("a cancelled dial succeeded")
	}
}
