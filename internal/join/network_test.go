package join_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// Microsoft's nat.exe is not in the bundle: with the bundled runtime a nat
// network is refused, before any change, unless the operator has put it in
// the CNI bin folder.
func TestJoinBundledNATNeedsTheOperatorsNatExe(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	before := w.FS.Paths()
	o := w.Options()
	o.Network.Mode, o.Network.Subnet = "nat", "10.244.2.0/24"
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), "--mode nat: needs nat.exe (Microsoft's windows-container-networking), which the release does not bundle and "+hosttest.CNIBinDir+" does not hold",
		"use --mode l2bridge (with --subnet, --cluster-cidr and --service-cidr), whose win-bridge plugin the release carries, or put nat.exe into "+hosttest.CNIBinDir)
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
		t.Errorf("the refusal changed the host: %v %v", after, w.Services.Calls)
	}

	// With nat.exe where the fix says, join writes the nat network.
	w.FS.AddFile(hosttest.CNIBinDir+`\nat.exe`, "MZ nat")
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "output", out.String(), "Pod network: nat with the nat plugin, written by join.", "wrote "+hosttest.CNINAT)
	hosttest.MustContain(t, "CNI config", w.FS.Content(hosttest.CNINAT), `"type": "nat"`, "10.244.2.0/24")
	if len(w.HNS.Calls) != 0 {
		t.Errorf("a nat network called HNS: %v", w.HNS.Calls)
	}
}

// Where HNS fails (a host without the Containers feature, or Wine), join
// stops at the network and takes back everything, the runtime's files
// included.
func TestJoinNetworkFailureUndoesEverything(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.PodNetHost()
	w.HNS.Fail = hns.ErrNotWindows
	before := w.FS.Paths()
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System())
	if err == nil {
		t.Fatal("join succeeded without HNS")
	}
	hosttest.MustContain(t, "error", err.Error(), "(write the pod network)",
		"rolled back: write the pod network, register the container runtime's service, install the container runtime, write the configuration")
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("after rollback the host has\n%v\nwant\n%v", after, before)
	}
	// containerd's service is registered before the network and removed
	// with it, never started.
	if want := []string{"install containerd", "uninstall containerd"}; !reflect.DeepEqual(w.Services.Calls, want) {
		t.Errorf("service calls %v, want %v", w.Services.Calls, want)
	}
	if len(w.Services.Configs) != 0 {
		t.Errorf("services left: %v", w.Services.Configs)
	}
}

func TestJoinNetworkInputIsCheckedFirst(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*join.Options)
		want   []string
	}{
		"an unknown mode":                       {func(o *join.Options) { o.Network.Mode = "overlay" }, []string{`--mode: Unsupported value: "overlay"`, `"l2bridge", "nat"`}},
		"l2bridge without the cluster's ranges": {func(o *join.Options) { o.Network.L2Bridge.ClusterCIDR = "" }, []string{"--cluster-cidr"}},
		"no subnet":                             {func(o *join.Options) { o.Network.Subnet = "" }, []string{"--subnet: is required", "pass --subnet with this node's pod range"}},
		"a bad subnet":                          {func(o *join.Options) { o.Network.Subnet = "10.244.2.0/33" }, []string{"--subnet 10.244.2.0/33"}},
	} {
		t.Run(name, func(t *testing.T) {
			w := hosttest.NewWorld(t)
			w.WithBundle()
			before := w.FS.Paths()
			o := hosttest.WithL2Bridge(w.Options())
			tc.change(&o)
			err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
			stepError(t, err, 1)
			hosttest.MustContain(t, "error", err.Error(), tc.want...)
			if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.HNS.Calls) != 0 {
				t.Errorf("the refusal changed the host: %v %v", after, w.HNS.Calls)
			}
		})
	}
}

// A CNI configuration already there is another installation's: join does
// not replace it.
func TestJoinRefusesACNIConfigInTheWay(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.FS.AddFile(hosttest.CNIL2Bridge, `{"someone": "else"}`)
	err := join.Run(context.Background(), &bytes.Buffer{}, hosttest.WithL2Bridge(w.Options()), w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), hosttest.CNIL2Bridge+" already exists", "move it away")
	if w.FS.Content(hosttest.CNIL2Bridge) != `{"someone": "else"}` {
		t.Error("join changed the CNI configuration in the way")
	}
}

// A second join on a joined host names the earlier installation and reset
// as the way out, not the file.
func TestJoinAgainNamesTheEarlierInstallation(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	if err := join.Run(context.Background(), &bytes.Buffer{}, hosttest.WithL2Bridge(w.Options()), w.System()); err != nil {
		t.Fatal(err)
	}
	// Without --mode the host's runtime, now join's containerd, keeps its
	// network and the earlier installation is found at its own step.
	err := join.Run(context.Background(), &bytes.Buffer{}, hosttest.WithL2Bridge(w.Options()), w.System())
	stepError(t, err, 3)
	o := hosttest.WithL2Bridge(w.Options())
	o.Network.Mode = "l2bridge"
	err = join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), "an earlier installation's join wrote it", "fix: remove the earlier installation with `edgecore.exe reset`")
}
