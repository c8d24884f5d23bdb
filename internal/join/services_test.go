package join_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
)

func ptrBool(b bool) *bool { return &b }

// writtenConfig loads the configuration join wrote.
func writtenConfig(t *testing.T, w *hosttest.World) (services config.Services, dns string) {
	t.Helper()
	c, _, err := config.LoadBytes([]byte(w.FS.Content(hosttest.CfgFile)), "join's configuration", w.Host)
	if err != nil {
		t.Fatal(err)
	}
	return config.ServicesOf(c), strings.Join(c.Modules.Edged.TailoredKubeletConfig.ClusterDNS, ",")
}

// A join that writes the pod network turns Services at the node on, with
// the node's DNS responder at the network's host address as the pods' DNS
// server.
func TestJoinWithAPodNetworkTurnsServicesOn(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System()); err != nil {
		t.Fatalf("join: %v\n%s", err, &out)
	}
	hosttest.MustContain(t, "output", out.String(), "Services at the node: on: ClusterIP and NodePort for the node's pods, and the cluster's DNS names answered at 10.244.2.2.")
	s, dns := writtenConfig(t, w)
	if !s.On || dns != "10.244.2.2" || s.ClusterDomain != "cluster.local" {
		t.Errorf("written: %+v, clusterDNS %q", s, dns)
	}
}

func TestJoinServicesFlag(t *testing.T) {
	// --services=false with a network: the switch is written off.
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	o := hosttest.WithL2Bridge(w.Options())
	o.Services = ptrBool(false)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join: %v\n%s", err, &out)
	}
	hosttest.MustContain(t, "output", out.String(), "Services at the node: off, as --services=false says.")
	if s, dns := writtenConfig(t, w); s.On || dns == "10.244.2.2" {
		t.Errorf("written: %+v, clusterDNS %q", s, dns)
	}

	// The operator's --set wins over join's default.
	w = hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	o = hosttest.WithL2Bridge(w.Options())
	o.Set = []string{"featureGates.edgeServices=false"}
	out.Reset()
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join: %v\n%s", err, &out)
	}
	hosttest.MustContain(t, "output", out.String(), "Services at the node: off, as --set says.")
}

// The host's own runtime and network: Services stay off unless asked
// for, and asked for without a pod network edgecore knows they are
// refused before anything changes.
func TestJoinServicesNeedAKnownPodNetwork(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	o := w.Options()
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join: %v\n%s", err, &out)
	}
	hosttest.MustContain(t, "output", out.String(), "Services at the node: off: join writes no pod network")
	if s, _ := writtenConfig(t, w); s.On {
		t.Error("Services on without a pod network")
	}

	w = hosttest.NewWorld(t)
	before := w.FS.Paths()
	o = w.Options()
	o.Services = ptrBool(true)
	err := join.Run(context.Background(), &bytes.Buffer{}, o, w.System())
	stepError(t, err, 1)
	hosttest.MustContain(t, "error", err.Error(), "--services: Services are served on the pod network edgecore knows", "no pod network is recorded in",
		"run `edgecore.exe cni-config` first")
	if after := w.FS.Paths(); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the refusal changed the host")
	}
}
