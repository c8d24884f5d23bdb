package reset_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostfs/hostfstest"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/reset"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/hns"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const cniState = `C:\Program Files\containerd\edgecore-cni-config.json`

// fakeNetwork stands in for podnet.Remover: it removes cni-config's record
// from the fake file system, as the real one does after the HNS objects.
type fakeNetwork struct {
	fs  *hostfstest.FS
	err error
}

func (n *fakeNetwork) Describe() string { return "remove the HNS network cni-config created" }

func (n *fakeNetwork) Remove(_ context.Context, out io.Writer) error {
	if n.err != nil {
		return n.err
	}
	fmt.Fprintln(out, "removed HNS network \"edgecore-l2bridge\"")
	return n.fs.Remove(cniState)
}

// reset --network removes the pod network and its record (in containerd's
// directory, which stays) as well as everything plain reset removes.
func TestResetNetwork(t *testing.T) {
	w := joined(t)
	w.FS.AddFile(cniState, "{}")
	o := resetOptions(w)
	o.Network = &fakeNetwork{fs: w.FS}
	var out bytes.Buffer
	if err := reset.Run(context.Background(), strings.NewReader(""), &out, false, o, w.System()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	want := append(append([]string{}, resetStepNames[:6]...), "[7/9] remove the pod network", "[8/9] remove the configuration", "[9/9] remove empty directories")
	for i := range want[:6] {
		want[i] = strings.Replace(want[i], "/8]", "/9]", 1)
	}
	if lines := hosttest.StepLines(out.String()); !reflect.DeepEqual(lines, want) {
		t.Errorf("steps:\n%s", strings.Join(lines, "\n"))
	}
	hosttest.MustContain(t, "output", out.String(), `removed HNS network "edgecore-l2bridge"`, `removed C:\etc\kubeedge`+"\n")
	if w.FS.Has(`C:\etc\kubeedge`) || !w.FS.Has(cniConf) {
		t.Errorf("after reset --network: %v", w.FS.Paths())
	}
}

// Without --network the pod network and its record stay, while
// C:\etc\kubeedge goes as usual.
func TestResetWithoutNetworkKeepsIt(t *testing.T) {
	w := joined(t)
	w.FS.AddFile(cniState, "{}")
	var out bytes.Buffer
	if err := reset.Run(context.Background(), strings.NewReader(""), &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if !w.FS.Has(cniState) || strings.Contains(out.String(), "pod network") {
		t.Errorf("reset without --network touched the pod network:\n%s", &out)
	}
	if w.FS.Has(`C:\etc\kubeedge`) {
		t.Errorf("reset without --network kept C:\\etc\\kubeedge: %v", w.FS.Paths())
	}
}

func TestResetNetworkFailureNamesTheStep(t *testing.T) {
	w := joined(t)
	o := resetOptions(w)
	o.Network = &fakeNetwork{fs: w.FS, err: errors.New("the Host Networking Service (HNS) exists on Windows only")}
	err := reset.Run(context.Background(), strings.NewReader(""), &bytes.Buffer{}, false, o, w.System())
	var se *steps.StepError
	if !errors.As(err, &se) || se.Step != "remove the pod network" || !strings.Contains(se.Fix, "run reset --network again") {
		t.Errorf("err = %v", err)
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
	hosttest.MustContain(t, "output", out.String(), "] write the pod network", "wrote "+hosttest.CNINAT, hosttest.CtrdConfig+" already points containerd at "+hosttest.CNIConfDir+" and "+hosttest.CNIBinDir)
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), "removed "+hosttest.CNINAT, "removed "+hosttest.CNINetRecord,
		`Node line3-pc is reset. containerd with its containers and images, and C:\var\lib\kubelet were left alone.`)
	if _, ok := w.Services.Configs["containerd"]; !ok {
		t.Error("reset removed the host's containerd")
	}
}

// With the host's runtime and --mode, join creates the CNI folders it
// points containerd at where they are missing, open to SYSTEM and
// Administrators only from their first moment, and records them; reset
// removes those it made, and leaves a folder it found (the operator's
// plugins) as it was. A folder that holds what another account planted is
// refused before any change.
func TestJoinHostRuntimeNetworkCreatesTheCNIFoldersThatResetRemoves(t *testing.T) {
	for _, found := range []bool{false, true} {
		w := hosttest.NewWorld(t)
		w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
		w.FS.AddFile(hosttest.CtrdConfig, "version = 3\n")
		if found {
			w.FS.AddFile(hosttest.CNIBinDir+`\nat.exe`, "MZ nat")
		}
		w.EdgecoreIssues(true)
		o := w.Options()
		o.Network.Mode, o.Network.Subnet = "nat", "10.244.2.0/24"
		var out bytes.Buffer
		if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
			t.Fatalf("join failed: %v\n%s", err, out.String())
		}
		made := map[string]string{hosttest.CtrdDir + `\cni`: acl.ParentSDDL, hosttest.CNIConfDir: acl.DirectorySDDL, hosttest.CNIBinDir: acl.DirectorySDDL}
		if found {
			made = map[string]string{hosttest.CNIConfDir: acl.DirectorySDDL}
		}
		for d, want := range made {
			if w.Made[d] != want {
				t.Errorf("found %v: %s was made with %q, want %q", found, d, w.Made[d], want)
			}
		}
		if _, ok := w.Made[hosttest.CNIBinDir]; found && ok {
			t.Errorf("the plugin folder the operator made was made again")
		}
		hosttest.MustContain(t, "record", w.FS.Content(hosttest.CNINetRecord), `"dirs": [`, `"C:\\Program Files\\containerd\\cni\\conf"`)
		out.Reset()
		if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
			t.Fatalf("reset failed: %v\n%s", err, out.String())
		}
		hosttest.MustContain(t, "reset output", out.String(), "removed "+hosttest.CNINAT, "removed "+hosttest.CNIConfDir+"\n")
		if w.FS.Has(hosttest.CNIConfDir) || w.FS.Has(hosttest.CNINetRecord) {
			t.Errorf("found %v: reset left what join made: %v", found, w.FS.Paths())
		}
		if found != w.FS.Has(hosttest.CNIBinDir) || found != w.FS.Has(hosttest.CtrdDir+`\cni`) {
			t.Errorf("found %v: after reset: %v\n%s", found, w.FS.Paths(), out.String())
		}
		if !w.FS.Has(hosttest.CtrdConfig) {
			t.Error("reset removed the host's config.toml")
		}
	}

	w := hosttest.NewWorld(t)
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	w.FS.AddFile(hosttest.CtrdConfig, "version = 3\n")
	w.FS.AddFile(hosttest.CNIConfDir+`\0-evil.conflist`, `{"type": "evil"}`)
	w.SDDL = map[string]string{hosttest.CNIConfDir + `\0-evil.conflist`: "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)"}
	before := w.FS.Paths()
	o := w.Options()
	o.Network.Mode, o.Network.Subnet = "nat", "10.244.2.0/24"
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	hosttest.StepError(t, err, 1, 9)
	hosttest.MustContain(t, "refusal", err.Error(), hosttest.CNIConfDir+`\0-evil.conflist (in `+hosttest.CNIConfDir+", a CNI configuration folder", "is owned by S-1-5-21-1-2-3-1001")
	if after := w.FS.Paths(); !reflect.DeepEqual(before, after) || len(w.Services.Calls) != 0 {
		t.Errorf("the host changed: %v %v", after, w.Services.Calls)
	}
}

// reset removes the CNI configuration join wrote, never one cni-config
// wrote (its record names no writer).
func TestResetLeavesTheNetworkCNIConfigWrote(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.FS.AddFile(hosttest.CNINAT, `{"type": "nat"}`)
	w.FS.AddFile(hosttest.CNINetRecord, `{"mode": "nat", "cniConfFile": "`+strings.ReplaceAll(hosttest.CNINAT, `\`, `\\`)+`", "hosttest.CNIBinDir": ""}`)
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	if !w.FS.Has(hosttest.CNINAT) || !w.FS.Has(hosttest.CNINetRecord) {
		t.Errorf("reset removed cni-config's network:\n%s", out.String())
	}
	// A record naming join but a file elsewhere is not followed.
	w.FS.AddFile(hosttest.CNINetRecord, `{"mode": "nat", "writtenBy": "join", "cniConfFile": "C:\\Windows\\win.ini", "hosttest.CNIBinDir": ""}`)
	w.FS.AddFile(`C:\Windows\win.ini`, "[fonts]")
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), `kept the CNI configuration:`, `outside `+hosttest.CNIConfDir)
	if !w.FS.Has(`C:\Windows\win.ini`) {
		t.Error("reset followed a forged record")
	}
}

func resetForce(t *testing.T, w *hosttest.World) {
	t.Helper()
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
}

// What the node's proxier programmed on the pod network join wrote goes
// with the node: the load balancers over the network's endpoints and its
// remote endpoints. The endpoints of pods and of the host, and a load
// balancer over another network, stay.
func TestResetRemovesTheServicesLoadBalancers(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	h := w.HNS
	netID := h.Networks["edgecore-l2bridge"].ID
	h.Endpoints["pod-a"] = &hns.Endpoint{ID: "ep-pod", Name: "pod-a", NetworkID: netID, IP: netip.MustParseAddr("10.244.2.10")}
	h.Endpoints["remote-1"] = &hns.Endpoint{ID: "ep-remote", NetworkID: netID, IP: netip.MustParseAddr("10.244.3.20")}
	h.Endpoints["other"] = &hns.Endpoint{ID: "ep-other", NetworkID: "net-other", IP: netip.MustParseAddr("172.16.0.5")}
	h.Remote = map[string]bool{"ep-remote": true}
	h.LBs = []hns.LoadBalancer{
		{ID: "lb-cluster-ip", Frontends: []string{"10.96.7.7"}, EndpointIDs: []string{"ep-pod", "ep-remote"}},
		{ID: "lb-node-port", EndpointIDs: []string{"ep-pod"}},
		{ID: "lb-someone-elses", Frontends: []string{"172.16.9.9"}, EndpointIDs: []string{"ep-other"}},
	}
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), "] remove the Services' load balancers",
		`removed 2 HNS load balancers and 1 remote endpoints the node's proxier programmed on "edgecore-l2bridge"`)
	if len(h.LBs) != 1 || h.LBs[0].ID != "lb-someone-elses" {
		t.Errorf("load balancers left: %+v", h.LBs)
	}
	if _, ok := h.Endpoints["remote-1"]; ok {
		t.Error("the remote endpoint stayed")
	}
	for _, name := range []string{"pod-a", "other", "edgecore-l2bridge-host"} {
		if _, ok := h.Endpoints[name]; !ok {
			t.Errorf("endpoint %s was removed", name)
		}
	}
}
