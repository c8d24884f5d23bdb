package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
)

// windowsHost is a Windows Server host whose %ProgramFiles% is on D:.
var windowsHost = config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "192.168.50.21",
	ProgramFiles: `D:\Program Files`, SystemDrive: "C:"}

const joinToken = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e." +
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJl"

// The configuration `join --hub-protocol quic` writes, as preflight reads
// it: the hub row checks the QUIC server, over QUIC.
func TestFromConfigQUIC(t *testing.T) {
	c, _, err := config.JoinConfig(config.JoinOptions{CloudCoreIPPort: "192.0.2.10:10001", Token: joinToken,
		HubProtocol: config.HubQUIC}, windowsHost, nil)
	if err != nil {
		t.Fatal(err)
	}
	pc := FromConfig(c, windowsHost, "")
	got := fmt.Sprintf("%s|%s|%s|%s|%v|%v", pc.CRIEndpoint, pc.CNIConfDir, pc.CNIBinDir, pc.RootDir, pc.Certificates, pc.NotJoined)
	want := `npipe://./pipe/containerd-containerd|D:\Program Files\containerd\cni\conf|D:\Program Files\containerd\cni\bin|` +
		`C:\var\lib\kubelet|[C:\etc\kubeedge\ca\rootCA.crt C:\etc\kubeedge\certs\server.crt]|false`
	if got != want {
		t.Errorf("config\n got %s\nwant %s", got, want)
	}

	h := healthyHost()
	h.files = map[string]string{
		`D:\Program Files\containerd\cni\conf\0-containerd-nat.conf`: goodCNI,
		`D:\Program Files\containerd\cni\bin\nat.exe`:                "MZ",
	}
	// cloudcore's QUIC port answers on UDP only.
	h.dialErr = map[string]error{"tcp 192.0.2.10:10001": errors.New("connection refused")}
	rows := Run(context.Background(), pc, h.probes())
	var cloud []Row
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "cloudcore") {
			cloud = append(cloud, r)
		}
		if r.Status == Fail {
			t.Errorf("FAIL row %+v", r)
		}
	}
	// join turns edgeStream on, so its tunnel is checked like the hub.
	wantCloud := []Row{pass("cloudcore quic", "192.0.2.10:10001 (QUIC) reachable"), pass("cloudcore https", "192.0.2.10:10002 reachable"),
		pass("cloudcore stream", "192.0.2.10:10004 reachable")}
	if fmt.Sprint(cloud) != fmt.Sprint(wantCloud) {
		t.Errorf("cloud rows\n got %q\nwant %q", cloud, wantCloud)
	}
}

// A node joined with the tunnel on whose cloud runs without cloudStream:
// the stream row fails with the cloud-side fix and the way to opt out.
func TestFromConfigTunnelClosed(t *testing.T) {
	c, _, err := config.JoinConfig(config.JoinOptions{CloudCoreIPPort: "192.0.2.10:10000", Token: joinToken}, windowsHost, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := healthyHost()
	h.dialErr = map[string]error{"tcp 192.0.2.10:10004": errors.New("connection refused")}
	var got []Row
	for _, r := range Run(context.Background(), FromConfig(c, windowsHost, ""), h.probes()) {
		if r.Name == "cloudcore stream" {
			got = append(got, r)
		}
	}
	want := []Row{fail("cloudcore stream", "192.0.2.10:10004 unreachable: connection refused",
		config.TunnelFix+" (Test-NetConnection 192.0.2.10 -Port 10004)")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stream rows\n got %q\nwant %q", got, want)
	}
	// Without the tunnel there is no such row.
	c.Modules.EdgeStream.Enable = false
	for _, e := range FromConfig(c, windowsHost, "").CloudCore {
		if e.Field == config.FieldTunnelServer {
			t.Errorf("edgeStream off, yet %+v is checked", e)
		}
	}
}

// With edgehub off, as on a node that only runs local workloads, there is
// no cloudcore to check and no certificate to compare the clock with.
func TestFromConfigEdgeHubOff(t *testing.T) {
	c, err := config.Sample(config.KindDefault, windowsHost)
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.EdgeHub.Enable = false
	if pc := FromConfig(c, windowsHost, ""); pc.CloudCore != nil || pc.Certificates != nil {
		t.Errorf("cloud %v, certificates %v", pc.CloudCore, pc.Certificates)
	}
}

// Before join there is no configuration: the defaults' placeholder
// cloudcore must not be dialled or failed (quick start step 4 checks the
// host before step 5 joins), and every host-side check still runs.
func TestBeforeJoinSkipsTheCloud(t *testing.T) {
	pc, err := BeforeJoin(windowsHost)
	if err != nil {
		t.Fatal(err)
	}
	h := healthyHost()
	h.files = map[string]string{
		`D:\Program Files\containerd\cni\conf\0-containerd-nat.conf`: goodCNI,
		`D:\Program Files\containerd\cni\bin\nat.exe`:                "MZ",
	}
	h.certs = nil
	p := h.probes()
	dialled := func(ctx context.Context, address string) error {
		t.Errorf("dialled %s before join", address)
		return errors.New("unreachable")
	}
	p.Dial, p.DialQUIC = dialled, dialled
	rows := Run(context.Background(), pc, p)
	var out bytes.Buffer
	if err := Render(&out, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SKIP    cloudcore              not joined yet: join checks cloudcore itself\n",
		"SKIP    Clock                  not joined yet: join has cloudcore issue the certificates the clock is compared with\n",
		"PASS    containerd CRI         containerd v1.7.13 (CRI v1) at npipe://./pipe/containerd-containerd: RuntimeReady\n",
		"PASS    CNI config             D:\\Program Files\\containerd\\cni\\conf\\0-containerd-nat.conf",
		"PASS    Free disk              40.0 GiB free for C:\\var\\lib\\kubelet\n",
		"PASS    Node files protected   SYSTEM and Administrators only, owned by Administrators, where they exist: C:\\etc\\kubeedge, C:\\var\\lib\\kubeedge",
		"SKIP    Host shutdown          the edgecore service is not installed yet: join or `edgecore.exe service install` makes a host shutdown wait up to 1m10s for it\n",
		"\npreflight: 0 FAIL, 0 WARN, 13 PASS, 3 SKIP\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if code := ExitCode(rows); code != 0 {
		t.Errorf("exit code %d before join on a ready host", code)
	}
}
