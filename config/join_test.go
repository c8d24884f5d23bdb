package config

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const testToken = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e." +
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJl"

func joinOpts() JoinOptions {
	return JoinOptions{CloudCoreIPPort: "192.168.50.10:10000", Token: testToken, Labels: []string{"site=plant-1,line=3"}}
}

func TestJoinConfigMatchesGoldenFile(t *testing.T) {
	var asked []string
	c, rewrites, err := JoinConfig(joinOpts(), testHost(Windows), func(addr string) error {
		asked = append(asked, addr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rewrites) != 0 {
		t.Errorf("generated config needed rewrites: %v", rewrites)
	}
	if strings.Join(asked, " ") != "192.168.50.10:10000 192.168.50.10:10002 192.168.50.10:10004" {
		t.Errorf("reachability asked for %v", asked)
	}
	got, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "windows-join.yaml", got)
	hub := c.Modules.EdgeHub
	if !hub.Enable || hub.Token != testToken || hub.HTTPServer != "https://192.168.50.10:10002" ||
		hub.WebSocket.Server != "192.168.50.10:10000" || !hub.WebSocket.Enable || hub.Quic.Enable {
		t.Errorf("edgeHub %+v websocket %+v", hub, hub.WebSocket)
	}
	if c.Modules.Edged.HostnameOverride != "line3-pc" || c.Modules.Edged.NodeLabels["site"] != "plant-1" ||
		c.Modules.Edged.NodeLabels["line"] != "3" {
		t.Errorf("edged %+v", c.Modules.Edged.TailoredKubeletFlag)
	}
	if c.Modules.EdgeStream.TunnelServer != "192.168.50.10:10004" {
		t.Errorf("tunnel server %q", c.Modules.EdgeStream.TunnelServer)
	}
	// What is written must load back as it is.
	p := writeFile(t, "edgecore.yaml", got)
	if _, rw, err := Load(p, testHost(Windows)); err != nil || len(rw) != 0 {
		t.Errorf("join config does not load back cleanly: %v %v", err, rw)
	}
}

func TestJoinConfigQUICAndEndpoint(t *testing.T) {
	o := joinOpts()
	o.HubProtocol = HubQUIC
	o.CloudCoreIPPort = "cloud.example.com:10001"
	o.CertPort = "30002"
	o.EdgeNodeName = "press-7"
	o.RemoteRuntimeEndpoint = `\\.\pipe\containerd-containerd`
	c, rewrites, err := JoinConfig(o, testHost(Windows), nil)
	if err != nil {
		t.Fatal(err)
	}
	hub := c.Modules.EdgeHub
	if !hub.Quic.Enable || hub.WebSocket.Enable || hub.Quic.Server != "cloud.example.com:10001" ||
		hub.HTTPServer != "https://cloud.example.com:30002" || c.Modules.Edged.HostnameOverride != "press-7" {
		t.Errorf("quic join: %+v", hub)
	}
	if got := c.Modules.Edged.TailoredKubeletConfig.ContainerRuntimeEndpoint; got != "npipe://./pipe/containerd-containerd" {
		t.Errorf("endpoint %q", got)
	}
	if len(rewrites) != 2 {
		t.Errorf("the pipe path should be reported as rewritten for both endpoints: %v", rewrites)
	}
}

func TestJoinConfigRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*JoinOptions)
		want   []string
	}{
		{"no token", func(o *JoinOptions) { o.Token = "" }, []string{"--token", "keadm gettoken"}},
		{"truncated token", func(o *JoinOptions) { o.Token = testToken[:80] }, []string{"--token", "not a KubeEdge join token", "<redacted>"}},
		{"no address", func(o *JoinOptions) { o.CloudCoreIPPort = "" }, []string{"--cloudcore-ipport", "192.168.1.10:10000"}},
		{"no port", func(o *JoinOptions) { o.CloudCoreIPPort = "192.168.50.10" }, []string{"--cloudcore-ipport", "HOST:PORT"}},
		// Hosts that end in a number are IPv4 addresses or nothing.
		{"number over 255", func(o *JoinOptions) { o.CloudCoreIPPort = "999.1.1.1:10000" },
			[]string{`--cloudcore-ipport: Invalid value: "999.1.1.1:10000": 999.1.1.1 is not an IPv4 address (each of the four numbers is 0 to 255`,
				"fix: give cloudcore's address and hub port, for example 192.168.1.10:10000"}},
		{"three numbers", func(o *JoinOptions) { o.CloudCoreIPPort = "192.168.10:10000" }, []string{"--cloudcore-ipport", "192.168.10 is not an IPv4 address"}},
		{"leading zeros", func(o *JoinOptions) { o.CloudCoreIPPort = "010.1.1.1:10000" }, []string{"--cloudcore-ipport", "010.1.1.1 is not an IPv4 address"}},
		{"hexadecimal", func(o *JoinOptions) { o.CloudCoreIPPort = "0x7f.1:10000" }, []string{"--cloudcore-ipport", "0x7f.1 is not an IPv4 address"}},
		{"name ending in a number", func(o *JoinOptions) { o.CloudCoreIPPort = "cloudcore.10:10000" }, []string{"--cloudcore-ipport", "does not end in a number"}},
		{"not a host name", func(o *JoinOptions) { o.CloudCoreIPPort = "cloud_core:10000" }, []string{"--cloudcore-ipport", `"cloud_core" is neither an IP address nor a host name`}},
		{"bad cert port", func(o *JoinOptions) { o.CertPort = "99999" }, []string{"--certport", "99999"}},
		{"upper-case node name", func(o *JoinOptions) { o.EdgeNodeName = "PRESS_7" }, []string{"--edgenode-name", "PRESS_7", "press-7"}},
		{"label without value", func(o *JoinOptions) { o.Labels = []string{"site"} }, []string{"--labels", "key=value"}},
		{"bad label key", func(o *JoinOptions) { o.Labels = []string{"bad key=x"} }, []string{"--labels", "label key"}},
		{"unknown protocol", func(o *JoinOptions) { o.HubProtocol = "mqtt" }, []string{"--hub-protocol", "websocket", "quic"}},
		{"unix endpoint", func(o *JoinOptions) { o.RemoteRuntimeEndpoint = "unix:///run/containerd/containerd.sock" },
			[]string{"containerRuntimeEndpoint", "npipe://./pipe/containerd-containerd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := joinOpts()
			tc.change(&o)
			_, _, err := JoinConfig(o, testHost(Windows), nil)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q:\n%v", want, err)
				}
			}
			if strings.Contains(err.Error(), "c2lnbmF0dXJl") {
				t.Errorf("error leaks the token:\n%v", err)
			}
		})
	}
}

func TestJoinConfigRefusesUnreachableCloud(t *testing.T) {
	_, _, err := JoinConfig(joinOpts(), testHost(Windows), func(addr string) error {
		if strings.HasSuffix(addr, ":10002") {
			return errors.New("connection refused")
		}
		return nil
	})
	if err == nil {
		t.Fatal("an unreachable certificate port was accepted")
	}
	for _, want := range []string{"192.168.50.10:10002", "connection refused", "--offline"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "192.168.50.10:10000") {
		t.Errorf("the reachable hub port is reported too:\n%v", err)
	}
}

// join turns edgeStream on towards the cloud's host by default, and the
// node IP the tunnel announces is the one edged reports: the host's
// address towards the cloud, the same on Windows and Linux.
func TestJoinConfigStream(t *testing.T) {
	for _, goos := range []string{Windows, "linux"} {
		o := joinOpts()
		o.CloudCoreIPPort = "cloud.example.com:30000"
		c, _, err := JoinConfig(o, testHost(goos), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := c.Modules.EdgeStream
		if !s.Enable || s.TunnelServer != "cloud.example.com:10004" || c.Modules.Edged.NodeIP != "10.20.30.40" {
			t.Errorf("%s: edgeStream %+v, nodeIP %q", goos, s, c.Modules.Edged.NodeIP)
		}
		o.NoStream = true
		c, _, err = JoinConfig(o, testHost(goos), func(addr string) error {
			if addr == "cloud.example.com:10004" {
				t.Errorf("%s: --stream=false asked for the tunnel port", goos)
			}
			return nil
		})
		if err != nil || c.Modules.EdgeStream.Enable {
			t.Errorf("%s: --stream=false left edgeStream %+v, %v", goos, c.Modules.EdgeStream, err)
		}
	}
}

// A cloud without cloudStream is refused with both ways out: turning it on,
// or --stream=false.
func TestJoinConfigTunnelUnreachable(t *testing.T) {
	_, _, err := JoinConfig(joinOpts(), testHost(Windows), func(addr string) error {
		if addr == "192.168.50.10:10004" {
			return errors.New("connection refused")
		}
		return nil
	})
	want := `--stream: Invalid value: "192.168.50.10:10004": cloudcore does not answer (connection refused): turn on cloudStream in cloudcore.yaml`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--stream=false") {
		t.Errorf("got %v\nwant %s … --stream=false", err, want)
	}
}
