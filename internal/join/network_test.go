package join

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/hns"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const (
	cniBinDir = ctrdDir + `\cni\bin`
	// cniNAT is where cni-config, and join, write a nat network.
	cniNAT = cniConfDir + `\0-containerd-nat.conf`
)

// Microsoft's nat.exe is not in the bundle: with the bundled runtime a nat
// network is refused, before any change, unless the operator has put it in
// the CNI bin folder.
func TestJoinBundledNATNeedsTheOperatorsNatExe(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	before := w.fs.Paths()
	o := w.options()
	o.Network.Mode, o.Network.Subnet = "nat", "10.244.2.0/24"
	err := Run(context.Background(), &bytes.Buffer{}, o, w.system())
	stepError(t, err, 1)
	mustContain(t, "error", err.Error(), "--mode nat: needs nat.exe (Microsoft's windows-container-networking), which the release does not bundle and "+cniBinDir+" does not hold",
		"use --mode l2bridge (with --subnet, --cluster-cidr and --service-cidr), whose win-bridge plugin the release carries, or put nat.exe into "+cniBinDir)
	if after := w.fs.Paths(); !reflect.DeepEqual(before, after) || len(w.services.calls) != 0 {
		t.Errorf("the refusal changed the host: %v %v", after, w.services.calls)
	}

	// With nat.exe where the fix says, join writes the nat network.
	w.fs.AddFile(cniBinDir+`\nat.exe`, "MZ nat")
	w.edgecoreIssues(true)
	var out bytes.Buffer
	if err := Run(context.Background(), &out, o, w.system()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	mustContain(t, "output", out.String(), "Pod network: nat with the nat plugin, written by join.", "wrote "+cniNAT)
	mustContain(t, "CNI config", w.fs.Content(cniNAT), `"type": "nat"`, "10.244.2.0/24")
	if len(w.hns.calls) != 0 {
		t.Errorf("a nat network called HNS: %v", w.hns.calls)
	}
}

// Where HNS fails (a host without the Containers feature, or Wine), join
// stops at the network and takes back everything, the runtime's files
// included.
func TestJoinNetworkFailureUndoesEverything(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	w.podNetHost()
	w.hns.fail = hns.ErrNotWindows
	before := w.fs.Paths()
	var out bytes.Buffer
	err := Run(context.Background(), &out, withL2Bridge(w.options()), w.system())
	if err == nil {
		t.Fatal("join succeeded without HNS")
	}
	mustContain(t, "error", err.Error(), "(write the pod network)",
		"rolled back: write the pod network, register the container runtime's service, install the container runtime, write the configuration")
	if after := w.fs.Paths(); !reflect.DeepEqual(before, after) {
		t.Errorf("after rollback the host has\n%v\nwant\n%v", after, before)
	}
	// containerd's service is registered before the network and removed
	// with it, never started.
	if want := []string{"install containerd", "uninstall containerd"}; !reflect.DeepEqual(w.services.calls, want) {
		t.Errorf("service calls %v, want %v", w.services.calls, want)
	}
	if len(w.services.installed) != 0 {
		t.Errorf("services left: %v", w.services.installed)
	}
}

// With the host's runtime join writes a network only when --mode asks, as
// cni-config would, pointing the host's config.toml at it; reset removes
// what join wrote.
func TestJoinHostRuntimeWritesTheNetworkOnlyWhenAsked(t *testing.T) {
	w := newWorld(t)
	w.services.installed["containerd"] = service.Config{Name: "containerd"}
	w.edgecoreIssues(true)
	var out bytes.Buffer
	if err := Run(context.Background(), &out, w.options(), w.system()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	mustContain(t, "output", out.String(), "Pod network: the host's own CNI configuration is used (give --mode to have join write one).")
	if strings.Contains(out.String(), "write the pod network") || w.fs.Has(cniNetRecord) {
		t.Errorf("join wrote a network it was not asked for:\n%s", out.String())
	}
	resetForce(t, w)

	w.fs.AddFile(ctrdConfig, "version = 3\n")
	o := w.options()
	o.Network.Mode, o.Network.Subnet = "nat", "10.244.2.0/24"
	out.Reset()
	if err := Run(context.Background(), &out, o, w.system()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	// With the host's runtime the plugin is the operator's: no check.
	mustContain(t, "output", out.String(), "] write the pod network", "wrote "+cniNAT, ctrdConfig+" already points containerd at "+cniConfDir+" and "+cniBinDir)
	out.Reset()
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	mustContain(t, "reset output", out.String(), "removed "+cniNAT, "removed "+cniNetRecord,
		`Node line3-pc is reset. containerd with its containers and images, and C:\var\lib\kubelet were left alone.`)
	if _, ok := w.services.installed["containerd"]; !ok {
		t.Error("reset removed the host's containerd")
	}
}

// reset removes the CNI configuration join wrote, never one cni-config
// wrote (its record names no writer).
func TestResetLeavesTheNetworkCNIConfigWrote(t *testing.T) {
	w := newWorld(t)
	w.fs.AddFile(cniNAT, `{"type": "nat"}`)
	w.fs.AddFile(cniNetRecord, `{"mode": "nat", "cniConfFile": "`+strings.ReplaceAll(cniNAT, `\`, `\\`)+`", "cniBinDir": ""}`)
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	if !w.fs.Has(cniNAT) || !w.fs.Has(cniNetRecord) {
		t.Errorf("reset removed cni-config's network:\n%s", out.String())
	}
	// A record naming join but a file elsewhere is not followed.
	w.fs.AddFile(cniNetRecord, `{"mode": "nat", "writtenBy": "join", "cniConfFile": "C:\\Windows\\win.ini", "cniBinDir": ""}`)
	w.fs.AddFile(`C:\Windows\win.ini`, "[fonts]")
	out.Reset()
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	mustContain(t, "reset output", out.String(), `kept the CNI configuration:`, `outside `+cniConfDir)
	if !w.fs.Has(`C:\Windows\win.ini`) {
		t.Error("reset followed a forged record")
	}
}

func TestJoinNetworkInputIsCheckedFirst(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*Options)
		want   []string
	}{
		"an unknown mode":                       {func(o *Options) { o.Network.Mode = "overlay" }, []string{`--mode: Unsupported value: "overlay"`, `"l2bridge", "nat"`}},
		"l2bridge without the cluster's ranges": {func(o *Options) { o.Network.L2Bridge.ClusterCIDR = "" }, []string{"--cluster-cidr"}},
		"no subnet":                             {func(o *Options) { o.Network.Subnet = "" }, []string{"--subnet: is required", "pass --subnet with this node's pod range"}},
		"a bad subnet":                          {func(o *Options) { o.Network.Subnet = "10.244.2.0/33" }, []string{"--subnet 10.244.2.0/33"}},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.withBundle()
			before := w.fs.Paths()
			o := withL2Bridge(w.options())
			tc.change(&o)
			err := Run(context.Background(), &bytes.Buffer{}, o, w.system())
			stepError(t, err, 1)
			mustContain(t, "error", err.Error(), tc.want...)
			if after := w.fs.Paths(); !reflect.DeepEqual(before, after) || len(w.hns.calls) != 0 {
				t.Errorf("the refusal changed the host: %v %v", after, w.hns.calls)
			}
		})
	}
}

// A CNI configuration already there is another installation's: join does
// not replace it.
func TestJoinRefusesACNIConfigInTheWay(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	w.fs.AddFile(cniL2Bridge, `{"someone": "else"}`)
	err := Run(context.Background(), &bytes.Buffer{}, withL2Bridge(w.options()), w.system())
	stepError(t, err, 1)
	mustContain(t, "error", err.Error(), cniL2Bridge+" already exists", "move it away")
	if w.fs.Content(cniL2Bridge) != `{"someone": "else"}` {
		t.Error("join changed the CNI configuration in the way")
	}
}

func resetForce(t *testing.T, w *world) {
	t.Helper()
	var out bytes.Buffer
	if err := Reset(context.Background(), nil, &out, false, ResetOptions{ConfigFile: cfgFile, LogFile: logFile, Force: true, Host: w.host, Layout: config.NewLayout(w.host)}, w.system()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
}

// A second join on a joined host names the earlier installation and reset
// as the way out, not the file.
func TestJoinAgainNamesTheEarlierInstallation(t *testing.T) {
	w := newWorld(t)
	w.withBundle()
	w.edgecoreIssues(true)
	if err := Run(context.Background(), &bytes.Buffer{}, withL2Bridge(w.options()), w.system()); err != nil {
		t.Fatal(err)
	}
	// Without --mode the host's runtime, now join's containerd, keeps its
	// network and the earlier installation is found at its own step.
	err := Run(context.Background(), &bytes.Buffer{}, withL2Bridge(w.options()), w.system())
	stepError(t, err, 3)
	o := withL2Bridge(w.options())
	o.Network.Mode = "l2bridge"
	err = Run(context.Background(), &bytes.Buffer{}, o, w.system())
	stepError(t, err, 1)
	mustContain(t, "error", err.Error(), "an earlier installation's join wrote it", "fix: remove the earlier installation with `edgecore.exe reset`")
}
