package podnet

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

var optionsHost = config.Host{GOOS: config.Windows, Hostname: "EDGE-1", ProgramFiles: `C:\Program Files`, SystemDrive: "C:"}

var optionsDeps = &deps.Dependencies{Host: optionsHost, Layout: config.NewLayout(optionsHost)}

// complete completes o on optionsHost with facts and returns what the
// command prints of it.
func complete(o *Options, facts HostFacts) (string, error) {
	o.Facts = facts
	err := o.Complete(optionsDeps)
	return o.PodRangeNote(), err
}

// fakeFacts is a host with one adapter on 192.168.1.0/24, the default
// route through it, and the resolver 192.168.1.1; the joined node's pod
// range is 10.244.7.0/24.
func fakeFacts() (HostFacts, *[]string) {
	var asked []string
	return HostFacts{
		Resolvers: func() ([]string, error) { return []string{"192.168.1.1"}, nil },
		Networks: func() ([]cni.HostNetwork, error) {
			return []cni.HostNetwork{{Interface: "Ethernet", Address: netip.MustParsePrefix("192.168.1.20/24")}}, nil
		},
		Adapters: func() ([]string, error) { return []string{"Ethernet", "Wi-Fi"}, nil },
		RouteIP:  func() (net.IP, error) { return net.ParseIP("192.168.1.20"), nil },
		PodCIDR: func(configFile string, _ config.Host) (string, error) {
			asked = append(asked, configFile)
			return "10.244.7.0/24", nil
		},
	}, &asked
}

func parsed(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions(optionsDeps)
	fs := pflag.NewFlagSet("cni-config", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOptionsCompleteNAT(t *testing.T) {
	facts, asked := fakeFacts()
	o := parsed(t, "--subnet", "10.244.2.0/24", "--gateway", "10.244.2.9")
	out, err := complete(o, facts)
	if err != nil {
		t.Fatal(err)
	}
	if o.Output != `C:\Program Files\containerd\cni\conf\0-containerd-nat.conf` || len(*asked) != 0 || out != "" {
		t.Errorf("nat: output %s, pod range asked %v, printed %q", o.Output, *asked, out)
	}
	if o.NAT.Subnet != "10.244.2.0/24" || o.NAT.Gateway != "10.244.2.9" || strings.Join(o.NAT.HostDNS, ",") != "192.168.1.1" || len(o.NAT.HostNetworks) != 1 {
		t.Errorf("nat options %+v", o.NAT)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid: %v", err)
	}
}

func TestOptionsCompleteL2Bridge(t *testing.T) {
	facts, asked := fakeFacts()
	o := parsed(t, "--mode", "l2bridge", "--cluster-cidr", "10.244.0.0/16", "--service-cidr", "10.96.0.0/12",
		"--dns", "10.96.0.10", "--dns-search", "svc.cluster.local", "--config", `C:\node.yaml`)
	out, err := complete(o, facts)
	if err != nil {
		t.Fatal(err)
	}
	if o.Output != `C:\Program Files\containerd\cni\conf\`+cni.L2BridgeFileName {
		t.Errorf("l2bridge output %s", o.Output)
	}
	if strings.Join(*asked, ",") != `C:\node.yaml` || out != "Pod range of this node from its Node object: 10.244.7.0/24\n" {
		t.Errorf("pod range asked of %v, printed %q", *asked, out)
	}
	b := o.L2Bridge
	if b.Subnet != "10.244.7.0/24" || b.Adapter != "Ethernet" || len(b.Adapters) != 2 || b.HostDNS != nil ||
		strings.Join(b.DNS, ",") != "10.96.0.10" || strings.Join(b.DNSSearch, ",") != "svc.cluster.local" || b.ClusterCIDR != "10.244.0.0/16" {
		t.Errorf("l2bridge options %+v", b)
	}

	// An -o given stays, and so do --subnet and --adapter.
	facts, asked = fakeFacts()
	o = parsed(t, "--mode", "l2bridge", "-o", `C:\cni\my.conf`, "--subnet", "10.244.3.0/24", "--adapter", "Wi-Fi")
	if _, err := complete(o, facts); err != nil {
		t.Fatal(err)
	}
	if o.Output != `C:\cni\my.conf` || len(*asked) != 0 || o.L2Bridge.Subnet != "10.244.3.0/24" || o.L2Bridge.Adapter != "Wi-Fi" {
		t.Errorf("given flags overridden: %s %v %+v", o.Output, *asked, o.L2Bridge)
	}
}

// A host fact that cannot be read names the flag that replaces it.
func TestOptionsCompleteFailures(t *testing.T) {
	facts, _ := fakeFacts()
	facts.Resolvers = func() ([]string, error) { return nil, errors.New("no registry") }
	_, err := complete(parsed(t, "--subnet", "10.244.2.0/24"), facts)
	if err == nil || err.Error() != "--dns was not given and the host's DNS servers cannot be read (no registry): pass --dns" {
		t.Errorf("resolvers: %v", err)
	}
	facts, _ = fakeFacts()
	facts.PodCIDR = func(string, config.Host) (string, error) { return "", errors.New("--subnet was not given, and ...") }
	if _, err := complete(parsed(t, "--mode", "l2bridge"), facts); err == nil || !strings.HasPrefix(err.Error(), "--subnet was not given") {
		t.Errorf("pod range: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	facts, _ := fakeFacts()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "bogus", "--subnet", "10.244.2.0/24"}, "--mode bogus: is not a pod network mode; use --mode nat (pods reachable from this host) or --mode l2bridge (routable pod addresses)"},
		{[]string{"--subnet", "10.244.2.0/24", "--gateway", "10.9.9.9"}, "--gateway 10.9.9.9"},
		{[]string{"--subnet", "192.168.1.0/24"}, "--subnet 192.168.1.0/24"},
		{[]string{"--mode", "l2bridge", "--subnet", "10.244.2.0/24", "--service-cidr", "10.96.0.0/12"}, "--cluster-cidr"},
	} {
		o := parsed(t, tc.args...)
		if _, err := complete(o, facts); err != nil {
			t.Fatal(err)
		}
		err := o.Validate()
		var fe *cni.FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a flag error with %q", tc.args, err, tc.want)
		}
	}
}
