package cni

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// Regenerate with: go test ./config/cni/ -run TestGolden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		opts   Options
	}{
		{
			// Defaults: gateway is the first address, DNS from the host with
			// Windows' IPv6 placeholders dropped.
			golden: "defaults.golden",
			opts: Options{
				Subnet:       "10.244.1.0/24",
				HostDNS:      []string{"fec0:0:0:ffff::1", "192.168.1.1", "fec0:0:0:ffff::2"},
				HostNetworks: []HostNetwork{{Interface: "Ethernet", Address: netip.MustParsePrefix("192.168.1.20/24")}},
			},
		},
		{
			golden: "explicit.golden",
			opts: Options{
				Subnet:  "172.20.0.0/16",
				Gateway: "172.20.255.254",
				DNS:     []string{"8.8.8.8", "114.114.114.114", "8.8.8.8"},
				HostDNS: []string{"192.168.1.1"},
				Master:  "Ethernet0",
			},
		},
		{
			// The nat network already exists: its subnet is accepted and
			// its adapter's address becomes the gateway.
			golden: "existing-nat.golden",
			opts: Options{
				Subnet:  "172.29.192.0/20",
				HostDNS: []string{"10.0.0.2"},
				HostNetworks: []HostNetwork{
					{Interface: "Ethernet", Address: netip.MustParsePrefix("10.0.0.15/24")},
					{Interface: "vEthernet (nat)", Address: netip.MustParsePrefix("172.29.192.1/20")},
				},
			},
		},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := Generate(tc.opts)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got\n%s--- want\n%s", path, got, want)
			}
			if findings := Validate(got, ValidateOptions{}); len(findings) != 0 {
				t.Errorf("the generated file fails its own validation: %v", findings)
			}
		})
	}
}
