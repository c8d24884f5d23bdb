//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
)

// The pod network the Windows edge is given: an l2bridge network as
// cni-config records it, whose host address lies in loopback's 127/8 so
// that the node's DNS responder (a real UDP and TCP socket under Wine)
// can bind it on this host. HNS is the e2e build's recording one.
const (
	svcNetwork  = "e2e-l2bridge"
	svcPodRange = "127.18.0.0/16"
	svcHostIP   = "127.18.0.2"
	// peerPod is a pod of another node, behind the Service.
	peerPod  = "10.244.8.20"
	peerPod2 = "10.244.8.21"
)

// Services at the node, end to end on the Windows node: a Service and
// its EndpointSlice created in the cloud reach the node's store through
// cloudcore's dynamicController; the node programs the load balancer
// (asserted from the recording HNS's log lines: Wine has no HNS) and its
// DNS responder answers the Service's name, before and during a cloud
// outage, and after the node restarted without the cloud. The Linux node
// has no pod network record (cni-config is Windows'), so it serves no
// Services; its responder is measured by `make bench-node`.
func TestWindowsServices(t *testing.T) {
	c := startClusterWith(t, cluster{dynamicController: true})
	e := newEdge(t, c, "windows")
	e.bin = mustEnv(t, "EDGECORE_HNSREC_EXE")
	enableServices(t, e)
	ctx := context.Background()
	prior := createPriorServices(t, c)

	e.startEdgecore(t)
	eventually(t, readyBound, "node "+e.name+" Ready", c.nodeReady(e.name, time.Time{}))
	dns := netip.MustParseAddrPort(svcHostIP + ":53")
	eventually(t, time.Minute, "the node's DNS responder", func() (bool, error) {
		return e.edgecore.logContains("The node's DNS responder answers the pods"), nil
	})
	// preflight reads the node's database, which holds the cluster's
	// default/kubernetes once the node has asked the cloud for Services.
	eventually(t, time.Minute, "the node's store following the cloud", func() (bool, error) {
		return e.edgecore.logContains("The node's store of Services follows the cloud"), nil
	})
	preflightServices(t, e, "Services from the cloud")
	// Every Service and EndpointSlice the cloud held before the node
	// came: cloudcore sends some of them without their kind, which
	// metamanager drops; the node takes them from the cloud's list.
	eventually(t, podBound, fmt.Sprintf("the load balancers of the %d Services in the cloud before the node came", len(prior)),
		priorProgrammed(e, prior))

	svc, err := c.client.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		fatal(t, err)
	}
	vip := svc.Spec.ClusterIP
	slices := c.client.DiscoveryV1().EndpointSlices("default")
	if _, err := slices.Create(ctx, webSlice(peerPod), metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
	name := "web.default.svc.cluster.local."
	toDNS := eventually(t, podBound, "the node's DNS answers "+name, func() (bool, error) {
		got, err := resolve(dns, name, false)
		return got == vip, fmt.Errorf("%q, %v", got, err)
	})
	toLB := eventually(t, podBound, "the node's load balancer for "+vip, func() (bool, error) {
		return e.edgecore.logContains("CreateLoadBalancer lb-") &&
			e.edgecore.logContains(fmt.Sprintf("TCP %s:80->8080 endpoints=[%s(remote)]", vip, peerPod)) &&
			e.edgecore.logContains("CreateRemoteEndpoint") && e.edgecore.logContains("ip="+peerPod), nil
	})
	t.Logf("Service web (%s) in the cloud: the node answered %s after %s and programmed its HNS load balancer over the peer's pod after %s",
		vip, name, fmtDur(toDNS), fmtDur(toLB))
	if got, err := resolve(dns, name, true); got != vip {
		errorf(t, "over TCP the node answered %s with %q (%v)", name, got, err)
	}
	if got, err := resolve(dns, "nope.default.svc.cluster.local.", false); !errors.Is(err, errNXDomain) {
		errorf(t, "a Service that does not exist: %q, %v", got, err)
	}

	// A second endpoint: the load balancer is updated in place.
	if _, err := slices.Update(ctx, webSlice(peerPod, peerPod2), metav1.UpdateOptions{}); err != nil {
		fatal(t, err)
	}
	eventually(t, podBound, "the load balancer updated with the second endpoint", func() (bool, error) {
		return e.edgecore.logContains("UpdateLoadBalancer lb-") &&
			e.edgecore.logContains(fmt.Sprintf("TCP %s:80->8080 endpoints=[%s(remote) %s(remote)]", vip, peerPod, peerPod2)), nil
	})
	preflightServices(t, e, "Services from the cloud")

	// The cloud goes away: the node still answers, and after a restart
	// without the cloud it answers, and programs the load balancer, from
	// its own database.
	c.cloudcore.stop()
	t.Logf("cloudcore stopped")
	time.Sleep(10 * time.Second)
	if got, err := resolve(dns, name, false); got != vip {
		errorf(t, "during the cloud outage the node answered %s with %q (%v)", name, got, err)
	}
	// Stopped as Ctrl+C stops it, not killed: Wine's server may keep a
	// killed Wine process's UDP socket, and with it the responder's port,
	// for minutes (seen one restart in three; the port then belongs to
	// wineserver alone), which Windows never does. A crash's recovery is
	// measured by bench-recovery and make chaos.
	if !e.edgecore.interrupt(30*time.Second) || !e.edgecore.logContains("edgecore stopped") {
		errorf(t, "edgecore did not end through its stop path within 30 s of Ctrl+C")
	}
	if held := portHolders(53); len(held) > 0 {
		errorf(t, "port 53 is still bound after the node ended: %v", held)
	}
	e.startEdgecore(t)
	restarted := e.edgecore.started
	answered := eventually(t, podBound, "the restarted node answers "+name+" without the cloud", func() (bool, error) {
		got, err := resolve(dns, name, false)
		// Who holds the port, should the new process not bind it
		// (Wine's server kept a killed process's socket: see above).
		return got == vip, fmt.Errorf("%q, %v; port 53 bound by %v", got, err, portHolders(53))
	})
	eventually(t, podBound, "the restarted node programs the load balancer without the cloud", func() (bool, error) {
		return e.edgecore.logContains(fmt.Sprintf("TCP %s:80->8080 endpoints=[%s(remote) %s(remote)]", vip, peerPod, peerPod2)), nil
	})
	t.Logf("cloud outage: the node answered %s throughout; restarted without the cloud it answered %s after its start (%s) and programmed the load balancer from its database",
		name, fmtDur(answered), restarted.Format(time.TimeOnly))
	// Those the cloud's list brought were stored too.
	eventually(t, podBound, "the restarted node programs the earlier Services' load balancers without the cloud", priorProgrammed(e, prior))

	// The cloud is back; the Service goes, and with it the name and the
	// load balancer.
	back := c.restartCloudcore(t)
	c.timeReady(t, e.name, back)
	if err := c.client.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		fatal(t, err)
	}
	if err := slices.Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		fatal(t, err)
	}
	eventually(t, podBound, "the deleted Service's name gone from the node", func() (bool, error) {
		_, err := resolve(dns, name, false)
		return errors.Is(err, errNXDomain), err
	})
	eventually(t, podBound, "the deleted Service's load balancer removed", func() (bool, error) {
		return e.edgecore.logContains("DeleteLoadBalancer lb-") && e.edgecore.logContains("DeleteEndpoint"), nil
	})
	fmt.Printf("e2e figures (windows edge): Service created in the cloud to its name answered by the node %s, to its HNS load balancer %s; "+
		"restarted without the cloud, the node answered it %s after its start\n", fmtDur(toDNS), fmtDur(toLB), fmtDur(answered))
}

// enableServices turns Services at the node on in e's configuration, as
// `edgecore.exe config --services` writes it, and gives the node the pod
// network's record that cni-config would have written.
func enableServices(t *testing.T, e *edge) {
	t.Helper()
	setServices(t, e, true)
	writePodNetworkRecord(t, e)
}

// setServices sets the switch of Services at the node in e's
// configuration to on, as `edgecore.exe config --services` writes it.
func setServices(t *testing.T, e *edge, on bool) {
	t.Helper()
	host := config.Host{GOOS: e.os}
	cfg, _, err := config.Load(e.cfgPath, host)
	if err != nil {
		fatal(t, err)
	}
	config.SetServices(cfg, on, netip.Addr{})
	data, err := yaml.Marshal(cfg)
	if err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(e.cfgPath, data, 0o600); err != nil {
		fatal(t, err)
	}
}

// writePodNetworkRecord gives the Windows node e the record of an
// l2bridge pod network that cni-config would have written, removed when
// the test ends.
func writePodNetworkRecord(t *testing.T, e *edge) {
	t.Helper()
	st := podnet.State{Mode: "l2bridge", Plugin: "win-bridge", Subnet: svcPodRange, HostIP: svcHostIP,
		Network:  &podnet.Object{Name: svcNetwork, ID: "e2e-net", Created: true},
		Endpoint: &podnet.Object{Name: svcNetwork + "-host", ID: "e2e-host", IP: svcHostIP, Created: true}}
	dir := filepath.Join(e.driveC, "Program Files", "containerd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(t, err)
	}
	record := filepath.Join(dir, "edgecore-cni-config.json")
	if _, err := os.Stat(record); err == nil {
		fatalf(t, "%s exists: another scenario's pod network record is in the prefix", record)
	}
	data, err := yaml.Marshal(st)
	if err != nil {
		fatal(t, err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(record, js, 0o644); err != nil {
		fatal(t, err)
	}
	t.Cleanup(func() { os.Remove(record) })
}

func webSlice(ips ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: ptr.To("peer-node"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true)}})
	}
	return s
}

// priorServiceCount Services, each with an EndpointSlice of two
// endpoints, are in the cloud before the Windows node first connects.
const priorServiceCount = 30

// createPriorServices creates them and returns the load balancer each
// must be programmed as, as the recording HNS logs it.
func createPriorServices(t *testing.T, c *cluster) []string {
	t.Helper()
	ctx := context.Background()
	var lbs []string
	for i := 0; i < priorServiceCount; i++ {
		name := fmt.Sprintf("prior-%d", i)
		svc, err := c.client.CoreV1().Services("default").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
		}, metav1.CreateOptions{})
		if err != nil {
			fatal(t, err)
		}
		ips := []string{fmt.Sprintf("10.245.%d.10", i), fmt.Sprintf("10.245.%d.11", i)}
		sl := webSlice(ips...)
		sl.Name, sl.Labels[discoveryv1.LabelServiceName] = name+"-1", name
		if _, err := c.client.DiscoveryV1().EndpointSlices("default").Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			fatal(t, err)
		}
		lbs = append(lbs, fmt.Sprintf("TCP %s:80->8080 endpoints=[%s(remote) %s(remote)]", svc.Spec.ClusterIP, ips[0], ips[1]))
	}
	return lbs
}

// priorProgrammed tells whether the node's current log shows each of lbs.
func priorProgrammed(e *edge, lbs []string) func() (bool, error) {
	return func() (bool, error) {
		missing := 0
		for _, lb := range lbs {
			if !e.edgecore.logContains(lb) {
				missing++
			}
		}
		return missing == 0, fmt.Errorf("%d of %d load balancers not programmed", missing, len(lbs))
	}
}

// preflightServices runs the node's preflight with its configuration and
// checks the Services rows.
func preflightServices(t *testing.T, e *edge, storeRow string) {
	t.Helper()
	bin, args := e.command(mustEnv(t, "EDGECORE_EXE"), "preflight", "--config", e.cfgArg, "--offline")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), e.env...)
	out, _ := cmd.CombinedOutput()
	for _, want := range []struct{ row, status string }{{"Services at the node", "PASS"}, {storeRow, "PASS"}, {"Pods' DNS server", "PASS"}} {
		if row := rowOf(string(out), want.row); !strings.HasPrefix(row, want.status) {
			errorf(t, "preflight's %s row is %q, want %s:\n%s", want.row, row, want.status, out)
		} else {
			t.Logf("preflight: %s", row)
		}
	}
}

var errNXDomain = errors.New("NXDOMAIN")

// resolve asks server for name's A record over UDP (or TCP) and returns
// the first address.
func resolve(server netip.AddrPort, name string, tcp bool) (string, error) {
	q, err := (&dnsmessage.Message{Header: dnsmessage.Header{ID: 0x5e5e, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}).Pack()
	if err != nil {
		return "", err
	}
	var resp []byte
	if tcp {
		resp, err = exchangeTCP(server, q)
	} else {
		resp, err = exchangeUDP(server, q)
	}
	if err != nil {
		return "", err
	}
	var m dnsmessage.Message
	if err := m.Unpack(resp); err != nil {
		return "", err
	}
	if m.Header.RCode == dnsmessage.RCodeNameError {
		return "", errNXDomain
	}
	for _, a := range m.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			return netip.AddrFrom4(r.A).String(), nil
		}
	}
	return "", fmt.Errorf("no A record (rcode %s)", m.Header.RCode)
}

func exchangeTCP(server netip.AddrPort, q []byte) ([]byte, error) {
	conn, err := net.DialTimeout("tcp", server.String(), 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(conn, l[:]); err != nil {
		return nil, err
	}
	resp := make([]byte, binary.BigEndian.Uint16(l[:]))
	_, err = io.ReadFull(conn, resp)
	return resp, err
}

// exchangeUDP sends q to server from an unconnected socket and takes the
// answer from server's port on server's address or, under Wine, on
// loopback's first address: a UDP socket of Wine 8 bound to 127.18.0.2
// answers from 127.0.0.1 (seen with test/e2e's responder and a plain
// echo), which a connected socket would drop. Windows answers from the
// bound address.
func exchangeUDP(server netip.AddrPort, q []byte) ([]byte, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	_ = pc.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := pc.WriteTo(q, net.UDPAddrFromAddrPort(server)); err != nil {
		return nil, err
	}
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return nil, err
		}
		src := from.(*net.UDPAddr).AddrPort()
		if src.Port() == server.Port() && (src.Addr().Unmap() == server.Addr() || src.Addr().Unmap() == netip.MustParseAddr("127.0.0.1")) {
			return buf[:n], nil
		}
	}
}
