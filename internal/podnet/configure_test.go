package podnet

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

func TestL2BridgeSetsUpEverything(t *testing.T) {
	h := newHost(t)
	var out bytes.Buffer
	if err := Configure(&out, h.options(), h.env()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	wantCalls := []string{
		"CreateNetwork edgecore-l2bridge", "CreateEndpoint edgecore-l2bridge-host", "AttachHost id-2",
		"EnableForwarding 10.160.11.2", "EnableForwarding 100.100.126.216",
	}
	if got := h.hns.mutations(); strings.Join(got, "|") != strings.Join(wantCalls, "|") {
		t.Errorf("HNS calls\n got %q\nwant %q", got, wantCalls)
	}
	n := h.hns.networks["edgecore-l2bridge"]
	if n == nil || n.Type != hns.TypeL2Bridge || n.Adapter != "eth1" || n.Subnets[0].Prefix.String() != "10.160.11.0/24" || n.Subnets[0].Gateway.String() != "10.160.11.1" {
		t.Errorf("network %+v", n)
	}
	if e := h.hns.endpoints["edgecore-l2bridge-host"]; e == nil || e.IP.String() != "10.160.11.2" || !h.hns.attached[e.ID] {
		t.Errorf("endpoint %+v, attached %v", e, h.hns.attached)
	}

	files := h.files(t)
	if names(files) != "cni-config.json, cni/conf/0-containerd-l2bridge.conf, config.toml, config.toml.20250301-120000.bak" {
		t.Fatalf("files: %s", names(files))
	}
	if files["config.toml.20250301-120000.bak"] != string(h.toml) {
		t.Error("the backup is not the original config.toml")
	}
	s, err := containerd.Read([]byte(files["config.toml"]))
	if err != nil || s.ConfDir != h.path("cni/conf") || s.BinDirs[0] != h.path("cni/bin") {
		t.Errorf("config.toml reads %+v, %v", s, err)
	}
	var st State
	if err := json.Unmarshal([]byte(files["cni-config.json"]), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode != cni.ModeL2Bridge || st.Network == nil || !st.Network.Created || st.Network.ID != "id-1" ||
		st.Endpoint == nil || !st.Endpoint.Created || st.Endpoint.ID != "id-2" || st.CNIConfFile != h.options().Output {
		t.Errorf("state %s", files["cni-config.json"])
	}
	// The host's address on the network, where the node's DNS responder
	// answers the pods, and the network the proxier programs.
	if a, ok := st.HostAddress(); !ok || a.String() != "10.160.11.2" || st.HostIP != "10.160.11.2" || st.NetworkName() != "edgecore-l2bridge" {
		t.Errorf("host address %v %v, network %q", a, ok, st.NetworkName())
	}
	for _, want := range []string{
		"creating HNS network \"edgecore-l2bridge\" (L2Bridge, 10.160.11.0/24, gateway 10.160.11.1) on adapter \"eth1\"",
		"Wrote " + h.options().Output,
		"Edited " + h.path("config.toml"),
		"ip route add 10.160.11.0/24 via 100.100.126.216",
		"Restart-Service containerd",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	}

	// A second run finds everything in place and changes nothing.
	before := h.files(t)
	h.hns.calls = nil
	out.Reset()
	if err := Configure(&out, h.options(), h.env()); err != nil {
		t.Fatalf("second run: %v\n%s", err, &out)
	}
	if got := h.hns.mutations(); strings.Join(got, "|") != "AttachHost id-2|EnableForwarding 10.160.11.2|EnableForwarding 100.100.126.216" {
		t.Errorf("second run HNS calls: %q", got)
	}
	if after := h.files(t); names(after) != names(before) || after["cni-config.json"] != before["cni-config.json"] {
		t.Errorf("second run changed files: %s", names(after))
	}
	for _, want := range []string{"exists; reusing it", "already holds this configuration", "already points containerd at"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("second run output lacks %q:\n%s", want, &out)
		}
	}
	if strings.Contains(out.String(), "Restart-Service") {
		t.Errorf("nothing changed, yet a restart is asked for:\n%s", &out)
	}
}

// Each change of a run fails in turn: the run returns the error and the
// host is as it was before, HNS and files alike.
func TestL2BridgeUndoesAFailedRun(t *testing.T) {
	h := newHost(t)
	if err := Configure(&bytes.Buffer{}, h.options(), h.env()); err != nil {
		t.Fatal(err)
	}
	total := h.steps.n
	if total != 9 { // network, endpoint, attach, 2x forwarding, conf, state, backup, config.toml
		t.Fatalf("a run makes %d changes (%q); the test expects 9", total, h.steps.log)
	}
	for failAt := 1; failAt <= total; failAt++ {
		h := newHost(t)
		original := h.files(t)
		h.steps.failAt = failAt
		var out bytes.Buffer
		err := Configure(&out, h.options(), h.env())
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("failing step %d (%s): err = %v", failAt, h.steps.log[failAt-1], err)
		}
		if len(h.hns.networks) != 0 || len(h.hns.endpoints) != 0 {
			t.Errorf("failing step %d (%s) left HNS objects: %v %v\n%s", failAt, h.steps.log[failAt-1], h.hns.networks, h.hns.endpoints, &out)
		}
		if got := h.files(t); names(got) != names(original) || got["config.toml"] != original["config.toml"] {
			t.Errorf("failing step %d (%s) left files: %s\n%s", failAt, h.steps.log[failAt-1], names(got), &out)
		}
		if failAt > 1 && !strings.Contains(out.String(), "undone: ") {
			t.Errorf("failing step %d: output does not say what was undone:\n%s", failAt, &out)
		}
	}
}

func TestL2BridgeRefusesBeforeChanging(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(h *host, o *Options)
		flag  string
		want  string
	}{
		{"an HNS network of another type with the name", func(h *host, o *Options) {
			h.hns.networks["edgecore-l2bridge"] = &hns.Network{ID: "nat-1", Name: "edgecore-l2bridge", Type: "NAT"}
		}, cni.FlagNetworkName, "--network-name edgecore-l2bridge: is an existing HNS network of type NAT, not L2Bridge; if edgecore.exe cni-config created it, `edgecore.exe reset --network` removes it; otherwise choose another --network-name, or remove it if nothing uses it: Get-HnsNetwork | Where-Object Name -eq 'edgecore-l2bridge' | Remove-HnsNetwork"},
		{"an l2bridge network with another range", func(h *host, o *Options) {
			h.hns.networks["edgecore-l2bridge"] = &hns.Network{ID: "l2-1", Name: "edgecore-l2bridge", Type: "L2Bridge",
				Subnets: []hns.Subnet{{Prefix: netip.MustParsePrefix("10.160.12.0/24"), Gateway: netip.MustParseAddr("10.160.12.1")}}}
		}, cni.FlagSubnet, "--subnet 10.160.11.0/24 (gateway 10.160.11.1): differs from the existing l2bridge network \"edgecore-l2bridge\": 10.160.12.0/24 (gateway 10.160.12.1); if edgecore.exe cni-config created it"},
		{"an l2bridge network on another adapter", func(h *host, o *Options) {
			h.hns.networks["edgecore-l2bridge"] = &hns.Network{ID: "l2-1", Name: "edgecore-l2bridge", Type: "l2bridge", Adapter: "eth0",
				Subnets: []hns.Subnet{{Prefix: netip.MustParsePrefix("10.160.11.0/24"), Gateway: netip.MustParseAddr("10.160.11.1")}}}
		}, cni.FlagAdapter, "--adapter eth1: differs from eth0, the adapter of the existing l2bridge network \"edgecore-l2bridge\"; use --adapter eth0;"},
		{"an adapter that does not exist", func(h *host, o *Options) { o.L2Bridge.Adapter = "Ethernet 3" },
			cni.FlagAdapter, "--adapter Ethernet 3: is not a network adapter of this host; name one of this host's adapters: eth0, eth1"},
		{"a gateway outside the subnet", func(h *host, o *Options) { o.L2Bridge.Gateway = "10.160.12.1" },
			cni.FlagGateway, "--gateway 10.160.12.1: lies outside --subnet 10.160.11.0/24"},
		{"an earlier network of another name", func(h *host, o *Options) {
			os.WriteFile(o.StateFile, []byte(`{"mode": "l2bridge", "network": {"name": "cbr0", "id": "x", "created": true}}`), 0o644)
		}, cni.FlagNetworkName, "--network-name edgecore-l2bridge: differs from \"cbr0\", the HNS network an earlier cni-config created"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t)
			o := h.options()
			tc.setup(h, &o)
			before := h.files(t)
			var out bytes.Buffer
			err := Configure(&out, o, h.env())
			if !isFlagError(err, tc.flag) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant a %s error starting %q", err, tc.flag, tc.want)
			}
			if m := h.hns.mutations(); len(m) != 0 {
				t.Errorf("HNS changed before the refusal: %q", m)
			}
			if after := h.files(t); names(after) != names(before) {
				t.Errorf("files changed before the refusal: %s", names(after))
			}
		})
	}
}

func TestL2BridgeReusesAForeignNetworkWithoutOwningIt(t *testing.T) {
	h := newHost(t)
	h.hns.networks["edgecore-l2bridge"] = &hns.Network{ID: "theirs", Name: "edgecore-l2bridge", Type: "L2Bridge",
		Subnets: []hns.Subnet{{Prefix: netip.MustParsePrefix("10.160.11.0/24"), Gateway: netip.MustParseAddr("10.160.11.1")}}}
	if err := Configure(&bytes.Buffer{}, h.options(), h.env()); err != nil {
		t.Fatal(err)
	}
	st, _, _ := ReadState(hostfs.OS{}, h.options().StateFile)
	if st.Network.Created || !st.Endpoint.Created {
		t.Errorf("ownership: network %+v endpoint %+v", st.Network, st.Endpoint)
	}
	// reset --network removes the endpoint it created and leaves the
	// network it found.
	var out bytes.Buffer
	r := Remover{StateFile: h.options().StateFile, FS: hostfs.OS{}, HNS: h.hns}
	if d := r.Describe(); d != `remove HNS endpoint "edgecore-l2bridge-host", which cni-config created, and `+h.options().StateFile {
		t.Errorf("Describe: %s", d)
	}
	if err := r.Remove(nil, &out); err != nil {
		t.Fatal(err)
	}
	if h.hns.networks["edgecore-l2bridge"] == nil || len(h.hns.endpoints) != 0 {
		t.Errorf("after reset: %v %v\n%s", h.hns.networks, h.hns.endpoints, &out)
	}
	if !strings.Contains(out.String(), `HNS network "edgecore-l2bridge" was there before cni-config: left alone`) {
		t.Errorf("output:\n%s", &out)
	}
}

func TestRemoveOnlyWhatCNIConfigCreated(t *testing.T) {
	h := newHost(t)
	if err := Configure(&bytes.Buffer{}, h.options(), h.env()); err != nil {
		t.Fatal(err)
	}
	r := Remover{StateFile: h.options().StateFile, FS: hostfs.OS{}, HNS: h.hns}
	if d := r.Describe(); !strings.HasPrefix(d, `remove HNS endpoint "edgecore-l2bridge-host" and HNS network "edgecore-l2bridge", which cni-config created`) {
		t.Errorf("Describe: %s", d)
	}
	// Someone replaced the endpoint since: same name, another ID.
	h.hns.endpoints["edgecore-l2bridge-host"].ID = "replaced"
	h.hns.networks["nat"] = &hns.Network{ID: "nat-1", Name: "nat", Type: "NAT"}
	var out bytes.Buffer
	if err := r.Remove(nil, &out); err == nil {
		// The network still has the replaced endpoint, which is not ours:
		// deleting the network fails in HNS, and reset says so.
		t.Fatalf("removed a network that still has a foreign endpoint\n%s", &out)
	}
	if h.hns.endpoints["edgecore-l2bridge-host"] == nil || h.hns.networks["nat"] == nil {
		t.Errorf("removed what cni-config did not create:\n%s", &out)
	}
	if !strings.Contains(out.String(), `HNS endpoint "edgecore-l2bridge-host" is not the one cni-config created (ID replaced, recorded id-2): left alone`) {
		t.Errorf("output:\n%s", &out)
	}

	// With the foreign endpoint gone, the network and the record go.
	delete(h.hns.endpoints, "edgecore-l2bridge-host")
	out.Reset()
	if err := r.Remove(nil, &out); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if h.hns.networks["edgecore-l2bridge"] != nil || h.hns.networks["nat"] == nil {
		t.Errorf("networks after reset: %v", h.hns.networks)
	}
	if _, err := os.Stat(h.options().StateFile); !os.IsNotExist(err) {
		t.Errorf("the record stays: %v", err)
	}
	for _, want := range []string{`HNS endpoint "edgecore-l2bridge-host" is already gone`, `removed HNS network "edgecore-l2bridge"`,
		"0-containerd-l2bridge.conf stays: pods on this host get no network until edgecore.exe cni-config runs again"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	}
	// Nothing recorded: nothing to do.
	out.Reset()
	if err := r.Remove(nil, &out); err != nil || !strings.Contains(out.String(), "nothing to remove") {
		t.Errorf("%v %s", err, &out)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	h := newHost(t)
	o := h.options()
	o.DryRun = true
	before := h.files(t)
	var out bytes.Buffer
	if err := Configure(&out, o, h.env()); err != nil {
		t.Fatal(err)
	}
	if len(h.hns.calls) != 0 || h.steps.n != 0 {
		t.Errorf("dry run called HNS %q, changed %q", h.hns.calls, h.steps.log)
	}
	if after := h.files(t); names(after) != names(before) {
		t.Errorf("dry run changed files: %s", names(after))
	}
	s := out.String()
	for _, want := range []string{
		"Dry run: cni-config would do the following; nothing is changed.",
		`- create or reuse the HNS network "edgecore-l2bridge" (L2Bridge, 10.160.11.0/24, gateway 10.160.11.1) on adapter "eth1"`,
		`"type": "sdnbridge"`,
		"- edit " + o.ContainerdConfig + " (containerd v1.7.25; the original is kept as a .bak copy):",
		"-      bin_dir = \"C:\\\\Program Files\\\\containerd\\\\cni\\\\bin\"",
		"+      bin_dir = ",
		"ip route add 10.160.11.0/24 via 100.100.126.216",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, s)
		}
	}
}

func TestNATPointsContainerdAtTheFile(t *testing.T) {
	h := newHost(t)
	o := h.options()
	o.Mode = cni.ModeNAT
	o.NAT = cni.Options{Subnet: "10.244.2.0/24", DNS: []string{"10.0.0.10"}}
	o.Output = h.path(filepath.Join("cni", "conf", cni.DefaultFileName))
	var out bytes.Buffer
	if err := Configure(&out, o, h.env()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if len(h.hns.calls) != 0 {
		t.Errorf("nat called HNS: %q", h.hns.calls)
	}
	files := h.files(t)
	if !strings.Contains(files["cni/conf/0-containerd-nat.conf"], `"type": "nat"`) {
		t.Errorf("files %s", names(files))
	}
	st, _, _ := ReadState(hostfs.OS{}, o.StateFile)
	if st.Mode != cni.ModeNAT || st.Network != nil || st.CNIConfFile != o.Output {
		t.Errorf("state %+v", st)
	}
	if a, ok := st.HostAddress(); !ok || a.String() != "10.244.2.1" || st.Subnet != "10.244.2.0/24" || st.NetworkName() != "nat" {
		t.Errorf("nat record: host address %v %v, subnet %q, network %q", a, ok, st.Subnet, st.NetworkName())
	}
	// An existing different file needs --force, before anything changes.
	o.NAT.Subnet = "10.244.3.0/24"
	err := Configure(&out, o, h.env())
	if err == nil || err.Error() != o.Output+" already exists: pass --force to replace it" {
		t.Errorf("err = %v", err)
	}
}

func TestContainerdRefusalComesFirst(t *testing.T) {
	h := newHost(t)
	v3, err := os.ReadFile("../../config/containerd/testdata/containerd-2.0.14-windows-default.toml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(h.path("config.toml"), v3, 0o644)
	err = Configure(&bytes.Buffer{}, h.options(), h.env()) // containerd 1.7.25 installed
	if err == nil || !strings.HasPrefix(err.Error(), h.path("config.toml")+":1: version: is 3, containerd 2.x's format, which the installed containerd v1.7.25 refuses") {
		t.Fatalf("err = %v", err)
	}
	if len(h.hns.calls) != 0 {
		t.Errorf("HNS was asked before the refusal: %q", h.hns.calls)
	}
}

func TestNoContainerdConfig(t *testing.T) {
	h := newHost(t)
	os.Remove(h.path("config.toml"))
	var out bytes.Buffer
	if err := Configure(&out, h.options(), h.env()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: containerd will not read "+h.path("cni/conf")) {
		t.Errorf("output:\n%s", &out)
	}
	if _, err := os.Stat(h.path("config.toml")); !os.IsNotExist(err) {
		t.Error("a config.toml was created")
	}
}
