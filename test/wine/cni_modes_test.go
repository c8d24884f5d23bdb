//go:build wine

package wine

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Wine has no Host Networking Service: an l2bridge run cannot create its
// network here. These tests check what the operator sees and the files;
// the HNS calls, their order, reuse on a second run and the clean-up of
// each failed step are proven with a recording fake in internal/podnet.

// cniHost is a scratch containerd directory: a config.toml as containerd
// writes it, and the CNI directories cni-config is pointed at.
type cniHost struct {
	dir, toml, conf, bin string
	original             []byte
}

func newCNIHost(t *testing.T, golden string, crlf bool) *cniHost {
	t.Helper()
	// On the prefix's drive C: cni-config refuses CNI folders below a
	// folder others may rename, which the test's own temporary folder is
	// under Wine (Z:\tmp, mode 1777).
	h := &cniHost{dir: driveCTempDir(t)}
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "containerd", "testdata", golden))
	if err != nil {
		t.Fatal(err)
	}
	if crlf {
		// What PowerShell's Out-File writes.
		data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	}
	h.toml, h.conf, h.bin, h.original = filepath.Join(h.dir, "config.toml"), filepath.Join(h.dir, "cni", "conf"), filepath.Join(h.dir, "cni", "bin"), data
	if err := os.WriteFile(h.toml, data, 0o644); err != nil {
		t.Fatal(err)
	}
	forgetPodNetworkRecord(t)
	return h
}

// forgetPodNetworkRecord removes the record cni-config keeps of the pod
// network in the prefix's containerd directory, now and when the test
// ends: the e2e, which runs in the same prefix after `make wine-test`,
// refuses to start over another scenario's record.
func forgetPodNetworkRecord(t *testing.T) {
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		return
	}
	state := filepath.Join(prefix, "drive_c", "Program Files", "containerd", "edgecore-cni-config.json")
	os.Remove(state)
	t.Cleanup(func() { os.Remove(state) })
}

// flags point cni-config at the scratch directory.
func (h *cniHost) flags(file string) []string {
	return []string{"-o", toWindowsPath(filepath.Join(h.conf, file)), "--cni-bin-dir", toWindowsPath(h.bin),
		"--containerd-config", toWindowsPath(h.toml)}
}

// files lists what the scratch directory holds.
func (h *cniHost) files(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.Walk(h.dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(h.dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out
}

func (h *cniHost) unchanged(t *testing.T, after string) {
	t.Helper()
	data, err := os.ReadFile(h.toml)
	if err != nil || !bytes.Equal(data, h.original) {
		t.Errorf("%s: config.toml changed", after)
	}
	if files := h.files(t); len(files) != 1 {
		t.Errorf("%s: files written: %v", after, files)
	}
}

var l2bridgeFlags = []string{"cni-config", "--mode", "l2bridge", "--subnet", "10.244.2.0/24",
	"--cluster-cidr", "10.244.0.0/16", "--service-cidr", "10.96.0.0/12", "--dns", "10.96.0.10"}

// nat with containerd 2.2's config.toml as PowerShell saved it: the two CNI
// lines change, CRLF line ends and every other line stay, the original is
// kept, and a second run changes nothing.
func TestCNIConfigPointsContainerdAtTheCNIDirs(t *testing.T) {
	h := newCNIHost(t, "containerd-2.2.1-windows-default.toml", true)
	args := append([]string{"cni-config", "--subnet", "10.244.2.0/24", "--dns", "10.0.0.10"}, h.flags("0-containerd-nat.conf")...)

	r := run(t, time.Minute, append(args, "--dry-run")...)
	if r.code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"Dry run: cni-config would do the following; nothing is changed.",
		`"type": "nat"`,
		"-      bin_dirs = ['C:\\Program Files\\containerd\\cni\\bin']",
		"+      bin_dirs = ['" + toWindowsPath(h.bin) + "', 'C:\\Program Files\\containerd\\cni\\bin']",
		"+      conf_dir = '" + toWindowsPath(h.conf) + "'",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
		}
	}
	h.unchanged(t, "dry run")

	r = run(t, time.Minute, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	edited, err := os.ReadFile(h.toml)
	if err != nil {
		t.Fatal(err)
	}
	oldLines, newLines := strings.Split(string(h.original), "\r\n"), strings.Split(string(edited), "\r\n")
	if bytes.Count(edited, []byte("\n")) != bytes.Count(edited, []byte("\r\n")) || len(oldLines) != len(newLines) {
		t.Fatalf("line ends or line count changed:\n%s", edited)
	}
	var changed []string
	for i := range oldLines {
		if oldLines[i] != newLines[i] {
			changed = append(changed, strings.TrimSpace(newLines[i]))
		}
	}
	want := []string{"bin_dirs = ['" + toWindowsPath(h.bin) + "', 'C:\\Program Files\\containerd\\cni\\bin']", "conf_dir = '" + toWindowsPath(h.conf) + "'"}
	if strings.Join(changed, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(changed, "\n"), strings.Join(want, "\n"))
	}
	var backup string
	for _, f := range h.files(t) {
		if strings.HasPrefix(f, "config.toml.") && strings.HasSuffix(f, ".bak") {
			backup = f
		}
	}
	if data, err := os.ReadFile(filepath.Join(h.dir, backup)); backup == "" || err != nil || !bytes.Equal(data, h.original) {
		t.Errorf("no backup of the original: %v", h.files(t))
	}
	if !strings.Contains(r.stdout, "Edited "+toWindowsPath(h.toml)) || !strings.Contains(r.stdout, "Restart-Service containerd") {
		t.Errorf("output:\n%s", r.stdout)
	}

	r = run(t, time.Minute, args...)
	if again, _ := os.ReadFile(h.toml); r.code != 0 || !bytes.Equal(again, edited) || !strings.Contains(r.stdout, "already points containerd at") {
		t.Errorf("second run: exit %d, config.toml changed: %v\n%s%s", r.code, !bytes.Equal(again, edited), r.stdout, r.stderr)
	}
}

// A config.toml cni-config cannot edit is refused before anything is
// written, with the line and the fix.
func TestCNIConfigRefusesAnInlineCNITable(t *testing.T) {
	h := newCNIHost(t, "containerd-1.7.25-windows-default.toml", false)
	h.original = []byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  cni = { conf_dir = \"C:\\\\cni\" }\n")
	os.WriteFile(h.toml, h.original, 0o644)
	r := run(t, time.Minute, append([]string{"cni-config", "--subnet", "10.244.2.0/24", "--dns", "10.0.0.10"}, h.flags("0-containerd-nat.conf")...)...)
	if r.code != 1 || !strings.Contains(r.stderr, toWindowsPath(h.toml)+`:3: plugins."io.containerd.grpc.v1.cri".cni: is written as an inline table`) ||
		!strings.Contains(r.stderr, `write it as a [plugins."io.containerd.grpc.v1.cri".cni] section`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	h.unchanged(t, "refusal")
}

func TestCNIConfigL2BridgeDryRun(t *testing.T) {
	h := newCNIHost(t, "containerd-1.7.25-windows-default.toml", false)
	r := run(t, time.Minute, append(append(append([]string{}, l2bridgeFlags...), h.flags("0-containerd-l2bridge.conf")...), "--dry-run")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`- create or reuse the HNS network "edgecore-l2bridge" (L2Bridge, 10.244.2.0/24, gateway 10.244.2.1) on adapter "`,
		`- create or reuse its host endpoint "edgecore-l2bridge-host" (10.244.2.2), attach it to the host, and turn forwarding on for it`,
		`"type": "sdnbridge"`, `"Exceptions": [`, `"10.96.0.0/12"`, `"Type": "SDNRoute"`,
		`-      conf_dir = "C:\\Program Files\\containerd\\cni\\conf"`,
		"ip route add 10.244.2.0/24 via ",
		"keepalived",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
		}
	}
	h.unchanged(t, "dry run")
}

// The l2bridge refusals name the flag and the fix and write nothing.
func TestCNIConfigL2BridgeRefusals(t *testing.T) {
	h := newCNIHost(t, "containerd-1.7.25-windows-default.toml", false)
	with := func(flag, value string) []string {
		args := append([]string{}, l2bridgeFlags...)
		for i := range args {
			if args[i] == flag {
				args[i+1] = value
				return append(args, h.flags("0-containerd-l2bridge.conf")...)
			}
		}
		return append(append(args, flag, value), h.flags("0-containerd-l2bridge.conf")...)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"gateway outside the subnet", with("--gateway", "10.244.3.1"),
			[]string{"--gateway 10.244.3.1: lies outside --subnet 10.244.2.0/24", "e.g. --gateway 10.244.2.1"}},
		{"pod range overlapping the service range", with("--service-cidr", "10.244.2.0/24"),
			[]string{"--subnet 10.244.2.0/24: overlaps --service-cidr 10.244.2.0/24"}},
		{"adapter that does not exist", with("--adapter", "Ethernet 9"),
			[]string{"--adapter Ethernet 9: is not a network adapter of this host; name one of this host's adapters: "}},
		{"network name of the nat plugin", with("--network-name", "nat"),
			[]string{`--network-name nat: cannot name an l2bridge network`}},
	}
	if host, ok := hostSubnet(); ok {
		// The host's own subnet (Wine shows the Linux host's interfaces).
		cluster := netip.PrefixFrom(host.Addr(), 8).Masked()
		service := "10.96.0.0/12"
		if cluster.Overlaps(netip.MustParsePrefix(service)) {
			service = "172.30.0.0/16"
		}
		args := with("--subnet", host.String())
		args = replace(replace(args, "--cluster-cidr", cluster.String()), "--service-cidr", service)
		cases = append(cases, struct {
			name string
			args []string
			want []string
		}{"pod range overlapping the host subnet", args, []string{"--subnet " + host.String() + ": overlaps the host subnet ", "give this node's pod range from the cluster"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, time.Minute, tc.args...)
			if r.code != 1 {
				t.Errorf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			h.unchanged(t, tc.name)
		})
	}
}

// A real l2bridge run needs HNS, which Wine does not have: there the first
// HNS call fails, and the run must say so and leave nothing behind. That a
// run creates the network, endpoint and configuration on Windows is proven
// over internal/podnet's recording fake (TestL2BridgeSetsUpEverything,
// TestL2BridgeUndoesAFailedRun); under Wine it cannot be, so this test
// checks the failure its name says.
func TestCNIConfigL2BridgeWithoutHNSFailsAndChangesNothing(t *testing.T) {
	h := newCNIHost(t, "containerd-1.7.25-windows-default.toml", false)
	r := run(t, time.Minute, append(append([]string{}, l2bridgeFlags...), h.flags("0-containerd-l2bridge.conf")...)...)
	if r.code == 0 {
		t.Fatalf("an l2bridge network was set up under Wine?\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "the Host Networking Service (HNS) exists on Windows only") &&
		!strings.Contains(r.stderr, "Host Networking Service does not offer") {
		t.Errorf("exit %d, the error does not name HNS:\n%s", r.code, r.stderr)
	}
	h.unchanged(t, "the failed HNS call")
}

// reset --network plans the removal of what cni-config recorded; with no
// record it has nothing to remove.
func TestResetNetworkDryRun(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edgecore.yaml")
	r := run(t, time.Minute, "reset", "--network", "--dry-run", "--config", toWindowsPath(cfg))
	if r.code != 0 || !strings.Contains(r.stdout, `remove the pod network: remove the pod network cni-config created (C:\Program Files\containerd\edgecore-cni-config.json records none)`) {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// preflight shows where containerd reads CNI configs; the prefix has no
// config.toml, so containerd's defaults apply.
func TestPreflightContainerdCNIDirs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "edgecore.yaml")
	r := run(t, time.Minute, "preflight", "--offline", "--config", toWindowsPath(missing))
	want := `PASS    containerd CNI dirs    no C:\Program Files\containerd\config.toml: containerd uses its defaults, C:\Program Files\containerd\cni\conf and C:\Program Files\containerd\cni\bin`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("preflight output lacks %q:\n%s", want, r.stdout)
	}
}

func replace(args []string, flag, value string) []string {
	out := append([]string{}, args...)
	for i := range out {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

// hostSubnet is the IPv4 network of the host's first non-loopback
// interface, as a /24 inside it.
func hostSubnet() (netip.Prefix, bool) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return netip.Prefix{}, false
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagLoopback != 0 || iface.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if ones, _ := ipn.Mask.Size(); ok && ip.Unmap().Is4() && !ip.IsLinkLocalUnicast() && ones <= 24 {
				return netip.PrefixFrom(ip.Unmap(), 24).Masked(), true
			}
		}
	}
	return netip.Prefix{}, false
}
