package config

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

func TestJoinOptionsFlags(t *testing.T) {
	var o JoinOptions
	fs := pflag.NewFlagSet("join", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.CertPort != DefaultCertPort || o.HubProtocol != HubWebSocket || o.NoStream || fs.Lookup("stream").DefValue != "true" {
		t.Errorf("defaults %+v", o)
	}
	if err := fs.Parse([]string{"-e", "10.0.0.1:10000", "-t", "tok", "-i", "n1", "-s", "20002", "-l", "a=b", "-l", "c=d",
		"-p", "tcp://x:1", "--hub-protocol", "quic", "--stream=false"}); err != nil {
		t.Fatal(err)
	}
	want := JoinOptions{CloudCoreIPPort: "10.0.0.1:10000", Token: "tok", EdgeNodeName: "n1", CertPort: "20002",
		Labels: []string{"a=b", "c=d"}, RemoteRuntimeEndpoint: "tcp://x:1", HubProtocol: "quic", NoStream: true}
	if strings.Join(o.Labels, ",") != "a=b,c=d" || o.CertPort != want.CertPort || o.Token != want.Token || o.EdgeNodeName != want.EdgeNodeName ||
		o.CloudCoreIPPort != want.CloudCoreIPPort || o.RemoteRuntimeEndpoint != want.RemoteRuntimeEndpoint || o.HubProtocol != want.HubProtocol || !o.NoStream {
		t.Errorf("parsed %+v", o)
	}
	// A bare --stream turns the tunnel back on.
	if err := fs.Parse([]string{"--stream"}); err != nil || o.NoStream {
		t.Errorf("--stream: %v, NoStream %v", err, o.NoStream)
	}
	if err := fs.Parse([]string{"--stream=maybe"}); err == nil || !strings.Contains(err.Error(), `expected true or false, got "maybe"`) {
		t.Errorf("--stream=maybe: %v", err)
	}
}

// JoinFile is the one render of a joining node's file, `config`'s and
// join's: the header, then the configuration as YAML.
func TestJoinFile(t *testing.T) {
	host := Host{GOOS: Windows, Hostname: "EDGE-1", NodeIP: "192.0.2.10", SystemDrive: "C:"}
	c, _, err := JoinConfig(JoinOptions{CloudCoreIPPort: "10.0.0.1:10000", Token: strings.Repeat("a", 64) + ".x.y.z"}, host, nil)
	if err != nil {
		t.Fatal(err)
	}
	for by, header := range map[string]string{
		"":                    "# edgecore configuration for node edge-1, joining cloudcore at 10.0.0.1:10000.\n",
		"`edgecore.exe join`": "# edgecore configuration for node edge-1, joining cloudcore at 10.0.0.1:10000; written by `edgecore.exe join`.\n",
	} {
		data, err := JoinFile(c, "10.0.0.1:10000", by)
		if err != nil {
			t.Fatal(err)
		}
		want := header + "# The token is removed from this file once the node certificates are issued.\n"
		if !strings.HasPrefix(string(data), want) {
			t.Errorf("by %q: header\n%s", by, string(data)[:200])
		}
		var back v1alpha2.EdgeCoreConfig
		if err := decodeStrict(data[len(want):], &back); err != nil || back.Modules.EdgeHub.Token != c.Modules.EdgeHub.Token {
			t.Errorf("by %q: the body does not load back: %v", by, err)
		}
	}
}

// The address given to -e is judged as a host before anything is
// generated: a dotted quad that is no IPv4 address names the flag.
func TestJoinFlagRefusesADottedQuadThatIsNoAddress(t *testing.T) {
	var o JoinOptions
	fs := pflag.NewFlagSet("join", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--cloudcore-ipport", "999.1.1.1:10000", "--token", testToken}); err != nil {
		t.Fatal(err)
	}
	_, _, err := JoinConfig(o, testHost(Windows), nil)
	want := `--cloudcore-ipport: Invalid value: "999.1.1.1:10000": 999.1.1.1 is not an IPv4 address`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "websocket.server") {
		t.Errorf("got %v, want one error naming the flag: %s", err, want)
	}
	// Names and addresses that are what they look like pass.
	for _, ok := range []string{"192.168.1.10:10000", "cloudcore.example.com:10000", "cloud-1:10000", "[fd00::1]:10000", "1host.example:10000"} {
		o.CloudCoreIPPort = ok
		if _, _, err := JoinConfig(o, testHost(Windows), nil); err != nil {
			t.Errorf("--cloudcore-ipport %s: %v", ok, err)
		}
	}
}

// --services is on, off or left to the command; config writes the
// switch only when it is given.
func TestServicesFlag(t *testing.T) {
	host := Host{GOOS: Windows, Hostname: "EDGE-1", NodeIP: "192.0.2.10", SystemDrive: "C:"}
	for _, tc := range []struct {
		args    []string
		want    string
		written bool
		on      bool
	}{
		{nil, "auto", false, false},
		{[]string{"--services"}, "true", true, true},
		{[]string{"--services=false"}, "false", true, false},
	} {
		var o JoinOptions
		fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := fs.Lookup("services").Value.String(); got != tc.want {
			t.Errorf("%v: --services reads %q", tc.args, got)
		}
		o.CloudCoreIPPort, o.Token = "10.0.0.1:10000", strings.Repeat("a", 64)+".x.y.z"
		c, _, err := JoinConfig(o, host, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, written := c.FeatureGates[GateServices]; written != tc.written || ServicesOf(c).On != tc.on {
			t.Errorf("%v: featureGates %v", tc.args, c.FeatureGates)
		}
	}
	var o JoinOptions
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--services=sometimes"}); err == nil || !strings.Contains(err.Error(), `expected true or false`) {
		t.Errorf("--services=sometimes: %v", err)
	}
}
