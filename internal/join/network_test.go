package join_test

import (
	"bytes"
	"context"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/hns"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const (
	cniBinDir = hosttest.CtrdDir + `\cni\bin`
	// cniNAT is where cni-config, and join, write a nat network.
	cniNAT = hosttest.CNIConfDir + `\0-containerd-nat.conf`
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
	hosttest.MustContain(t, "error", err.Error(), "--mode nat: needs nat.exe (Microsoft's windows-container-networking), which the release does not bundle and "+cniBinDir+" does not hold",
		"use --mode l2bridge (with --subnet, --cluster-cidr and --service-cidr), whose win-bridge plugin the release carries, or put nat.exe into "+cniBinDir)
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
		t.Errorf("the refusal changed the host: %v %v", after, w.Services.Calls)
	}

	// With nat.exe where the fix says, join writes the nat network.
	w.FS.AddFile(cniBinDir+`\nat.exe`, "MZ nat")
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "output", out.String(), "Pod network: nat with the nat plugin, written by join.", "wrote "+cniNAT)
	hosttest.MustContain(t, "CNI config", w.FS.Content(cniNAT), `"type": "nat"`, "10.244.2.0/24")
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

// With the host's runtime join writes a network only when --mode asks, as
// cni-config would, pointing the host's config.toml at it; reset removes
// what join wrote.
func TestJoinHostRuntimeWritesTheNetworkOnlyWhenAsked(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, w.Options(), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "output", out.String(), "Pod network: the host's own CNI configuration is used (give --mode to have join write one).")
	if strings.Contains(out.String(), "write the pod network") || w.FS.Has(hosttest.CNINetRecord) {
		t.Errorf("join wrote a network it was not asked for:\n%s", out.String())
	}
	resetForce(t, w)

	w.FS.AddFile(hosttest.CtrdConfig, "version = 3\n")
	o := w.Options()
	o.Network.Mode, o.Network.Subnet = "nat", "10.244.2.0/24"
	out.Reset()
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	// With the host's runtime the plugin is the operator's: no check.
	hosttest.MustContain(t, "output", out.String(), "] write the pod network", "wrote "+cniNAT, hosttest.CtrdConfig+" already points containerd at "+hosttest.CNIConfDir+" and "+cniBinDir)
	out.Reset()
	if err := join.Reset(context.Background(), nil, &out, false, join.ResetOptions{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), "removed "+cniNAT, "removed "+hosttest.CNINetRecord,
		`Node line3-pc is reset. containerd with its containers and images, and C:\var\lib\kubelet were left alone.`)
	if _, ok := w.Services.Configs["containerd"]; !ok {
		t.Error("reset removed the host's containerd")
	}
}

// reset removes the CNI configuration join wrote, never one cni-config
// wrote (its record names no writer).
func TestResetLeavesTheNetworkCNIConfigWrote(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.FS.AddFile(cniNAT, `{"type": "nat"}`)
	w.FS.AddFile(hosttest.CNINetRecord, `{"mode": "nat", "cniConfFile": "`+strings.ReplaceAll(cniNAT, `\`, `\\`)+`", "cniBinDir": ""}`)
	var out bytes.Buffer
	if err := join.Reset(context.Background(), nil, &out, false, join.ResetOptions{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	if !w.FS.Has(cniNAT) || !w.FS.Has(hosttest.CNINetRecord) {
		t.Errorf("reset removed cni-config's network:\n%s", out.String())
	}
	// A record naming join but a file elsewhere is not followed.
	w.FS.AddFile(hosttest.CNINetRecord, `{"mode": "nat", "writtenBy": "join", "cniConfFile": "C:\\Windows\\win.ini", "cniBinDir": ""}`)
	w.FS.AddFile(`C:\Windows\win.ini`, "[fonts]")
	out.Reset()
	if err := join.Reset(context.Background(), nil, &out, false, join.ResetOptions{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), `kept the CNI configuration:`, `outside `+hosttest.CNIConfDir)
	if !w.FS.Has(`C:\Windows\win.ini`) {
		t.Error("reset followed a forged record")
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

func resetForce(t *testing.T, w *hosttest.World) {
	t.Helper()
	var out bytes.Buffer
	if err := join.Reset(context.Background(), nil, &out, false, join.ResetOptions{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
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
