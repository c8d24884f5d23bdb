package preflight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// Each case changes one fact of a healthy host and names the rows it
// expects for that check, exactly as the operator reads them.
func TestChecks(t *testing.T) {
	const (
		confPath = `C:\Program Files\containerd\cni\conf\0-containerd-nat.conf`
		binDir   = `C:\Program Files\containerd\cni\bin`
	)
	for _, tc := range []struct {
		name   string
		change func(h *host, c *Config)
		check  string
		want   []Row
	}{
		{"Server 2019", func(h *host, c *Config) { h.version = hostprobe.WindowsVersion{Build: 17763, UBR: 5458} }, nameBuild,
			[]Row{pass(nameBuild, "build 17763.5458 (Windows Server 2019): pods need images tagged ltsc2019, e.g. mcr.microsoft.com/windows/nanoserver:ltsc2019")}},
		{"Server 2016", func(h *host, c *Config) {
			h.version = hostprobe.WindowsVersion{ProductName: "Windows Server 2016 Standard", Build: 14393}
		}, nameBuild,
			[]Row{fail(nameBuild, "Windows Server 2016 Standard, build 14393 is older than Windows Server 2019 (build 17763)",
				"install Windows Server 2019 or 2022; containerd and edged do not run on older builds")}},
		{"client build", func(h *host, c *Config) {
			h.version = hostprobe.WindowsVersion{ProductName: "Windows 10 Pro", Build: 19045}
		}, nameBuild,
			[]Row{warn(nameBuild, "Windows 10 Pro, build 19045 has no LTSC container base image; process-isolated pods need images built for 10.0.19045",
				"use Windows Server 2019 (17763), 2022 (20348) or 2025 (26100), whose images are tagged ltsc2019, ltsc2022 and ltsc2025")}},
		{"Server 2025", func(h *host, c *Config) { h.version = hostprobe.WindowsVersion{Build: 26100} }, nameBuild,
			[]Row{pass(nameBuild, "build 26100 (Windows Server 2025): pods need images tagged ltsc2025, e.g. mcr.microsoft.com/windows/nanoserver:ltsc2025")}},
		{"build unreadable", func(h *host, c *Config) {
			h.versionEr = errors.New("not supported on linux: run preflight on the Windows host")
		}, nameBuild,
			[]Row{warn(nameBuild, "could not check: not supported on linux: run preflight on the Windows host", "")}},
		{"Containers feature off", func(h *host, c *Config) { h.features = false }, nameContainers,
			[]Row{fail(nameContainers, "the Windows feature Containers is not enabled",
				"Enable-WindowsOptionalFeature -Online -FeatureName Containers -All, then restart the host")}},
		{"kubelet and kube-proxy running, names in any case", func(h *host, c *Config) {
			h.procs = append(h.procs, proc.Process{PID: 77, Name: ""},
				proc.Process{PID: 1200, ParentPID: 640, Name: "KUBELET.EXE"}, proc.Process{PID: 1300, ParentPID: 640, Name: "kube-proxy.exe"})
			h.services = map[int]string{1200: "kubelet"}
			h.programs = map[int]string{1300: `C:\k\kube-proxy.exe`}
		}, nameKubelet,
			[]Row{fail(nameKubelet, `KUBELET.EXE (PID 1200, the process of the service kubelet), kube-proxy.exe (PID 1300, runs C:\k\kube-proxy.exe, which only administrators may change) running; `+
				"edgecore runs its own kubelet and the two would fight over the pods",
				"stop them and remove them from start-up: Stop-Service kubelet, kube-proxy; Set-Service kubelet -StartupType Disabled")}},
		{"a user's program called kubelet.exe", func(h *host, c *Config) {
			h.procs = append(h.procs, proc.Process{PID: 1400, ParentPID: 3000, Name: "kubelet.exe"})
			h.programs = map[int]string{1400: `C:\Users\bob\kubelet.exe`}
			h.changeable = map[string]string{`C:\Users\bob\kubelet.exe`: "is owned by WIN-EDGE\\bob"}
		}, nameKubelet,
			[]Row{pass(nameKubelet, `no installed kubelet.exe or kube-proxy.exe is running; not counted: kubelet.exe (PID 1400, runs C:\Users\bob\kubelet.exe, which is owned by WIN-EDGE\bob: `+
				"a program anyone may have put there, not an installed kubelet)")}},
		{"disk below the warning threshold, root dir not created yet", func(h *host, c *Config) {
			h.free, h.size = 6*GiB, 30*GiB
			h.existing = map[string]bool{`C:\`: true, `C:\var`: true}
		}, nameDisk,
			[]Row{warn(nameDisk, `6.0 GiB free for C:\var\lib\kubelet; a servercore-based image alone needs about 5 GiB`, "free space on that volume, at least 10 GiB")}},
		{"free space below imagefs.available: DiskPressure from the start", func(h *host, c *Config) {
			h.free, h.size = 37*GiB, 252*GiB
		}, nameDisk,
			[]Row{fail(nameDisk, `37.0 GiB free for C:\var\lib\kubelet, 14.7% of the 252.0 GiB volume: below evictionHard imagefs.available 15%, so the kubelet reports DiskPressure and admits no pod`,
				"free space on that volume, or lower modules.edged.tailoredKubeletConfig.evictionHard imagefs.available")}},
		{"thresholds as quantities", func(h *host, c *Config) {
			h.free, h.size = 12*GiB, 500*GiB
			c.EvictionHard = map[string]string{"nodefs.available": "20Gi", "imagefs.available": "1Gi"}
		}, nameDisk,
			[]Row{fail(nameDisk, `12.0 GiB free for C:\var\lib\kubelet, 2.4% of the 500.0 GiB volume: below evictionHard nodefs.available 20Gi, so the kubelet reports DiskPressure and admits no pod`,
				"free space on that volume, or lower modules.edged.tailoredKubeletConfig.evictionHard nodefs.available")}},
		{"thresholds lowered for a small volume", func(h *host, c *Config) {
			h.free, h.size = 12*GiB, 100*GiB
			c.EvictionHard = map[string]string{"nodefs.available": "5%", "imagefs.available": "5%"}
		}, nameDisk,
			[]Row{pass(nameDisk, `12.0 GiB free for C:\var\lib\kubelet`)}},
		{"threshold unreadable", func(h *host, c *Config) { c.EvictionHard = map[string]string{"imagefs.available": "lots"} }, nameDisk,
			[]Row{fail(nameDisk, `modules.edged.tailoredKubeletConfig.evictionHard imagefs.available: "lots" is neither a percentage nor a quantity (quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$')`,
				`write a percentage such as "15%" or a quantity such as "2Gi"`)}},
		{"disk nearly full", func(h *host, c *Config) { h.free, h.size = GiB+GiB/2, 8*GiB }, nameDisk,
			[]Row{fail(nameDisk, `1.5 GiB free for C:\var\lib\kubelet; pulls and pod logs will fill the volume`,
				"free space on that volume, or move modules.edged.rootDirectory to one with at least 10 GiB free")}},
		{"containerd not running", func(h *host, c *Config) {
			h.criErr = errors.New("cannot connect: open \\\\.\\pipe\\containerd-containerd: The system cannot find the file specified.")
		}, nameCRI,
			[]Row{fail(nameCRI, `npipe://./pipe/containerd-containerd: cannot connect: open \\.\pipe\containerd-containerd: The system cannot find the file specified.`,
				"start containerd (Start-Service containerd) and check that modules.edged.containerRuntimeEndpoint is its address")}},
		{"a CRI server the node does not trust", func(h *host, c *Config) {
			h.criErr = servertrust.Judge(servertrust.Runtime, servertrust.Facts{GOOS: "windows", Address: `\\.\pipe\containerd-containerd`,
				Server:  pipe.Server{PID: 6120, UID: -1, SDDL: "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)(A;;FR;;;WD)"},
				Process: proc.Identity{Account: "S-1-5-21-1-2-3-1001", AccountName: `LINE3-PC\alice`, Image: `C:\Users\alice\fakecri.exe`}, ServiceState: "not installed"})
		}, nameCRI,
			[]Row{fail(nameCRI, `the container runtime's pipe \\.\pipe\containerd-containerd is served by process 6120 (C:\Users\alice\fakecri.exe, running as LINE3-PC\alice (S-1-5-21-1-2-3-1001)), `+
				`which edgecore does not trust: it is not the containerd service's process running as SYSTEM (the containerd service is not installed), `+
				`and its pipe is owned by S-1-5-21-1-2-3-1001, not SYSTEM or Administrators (O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)(A;;FR;;;WD)); it would receive every pod's secrets and registry credentials`,
				"stop process 6120 (Stop-Process -Id 6120 in an elevated PowerShell) and start containerd (Start-Service containerd), then try again; "+
					"a runtime of your own must run as the containerd service under LocalSystem, or serve its pipe with a descriptor that admits SYSTEM and Administrators only, such as O:BAD:P(A;;GA;;;SY)(A;;GA;;;BA)")}},
		{"containerd without CRI v1", func(h *host, c *Config) { h.criErr = hostprobe.ErrCRIv1Unsupported }, nameCRI,
			[]Row{fail(nameCRI, "npipe://./pipe/containerd-containerd: the runtime does not serve CRI v1 (runtime.v1.RuntimeService)",
				"upgrade containerd to 1.6 or later; edged speaks CRI v1 only")}},
		{"no runtime endpoint", func(h *host, c *Config) { c.CRIEndpoint = "" }, nameCRI,
			[]Row{fail(nameCRI, "modules.edged.containerRuntimeEndpoint is empty", "set it to containerd's pipe: npipe://./pipe/containerd-containerd")}},
		{"CNI not initialized", func(h *host, c *Config) {
			h.cri.Conditions[1] = hostprobe.CRICondition{Type: "NetworkReady", Reason: "NetworkPluginNotReady", Message: "Network plugin returns error: cni plugin not initialized"}
		}, nameCRINetwork,
			[]Row{fail(nameCRINetwork, "NetworkReady is false: NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized (containerd found no usable CNI config or plugin)",
				"write the CNI config with edgecore.exe cni-config, then Restart-Service containerd")}},
		{"runtime not ready", func(h *host, c *Config) { h.cri.Conditions = h.cri.Conditions[1:] }, nameCRI,
			[]Row{fail(nameCRI, "containerd v1.7.13 (CRI v1) at npipe://./pipe/containerd-containerd: RuntimeReady is not reported",
				"read containerd's log for the cause, then Restart-Service containerd")}},
		{"no CNI config dir", func(h *host, c *Config) { delete(h.files, confPath) }, nameCNIConfig,
			[]Row{fail(nameCNIConfig, `C:\Program Files\containerd\cni\conf does not exist`, "write one: edgecore.exe cni-config --subnet <pod range>")}},
		{"the seed's sample: gateway outside, runtime DNS", func(h *host, c *Config) {
			h.files[confPath] = `{"cniVersion": "0.2.0", "name": "nat", "type": "nat",
			  "ipam": {"subnet": "172.21.208.0/20", "routes": [{"GW": "172.21.224.1"}]},
			  "capabilities": {"portMappings": true, "dns": true}}`
		}, nameCNIConfig,
			[]Row{
				fail(nameCNIConfig, confPath+": ipam.routes[0].gw 172.21.224.1 lies outside the subnet 172.21.208.0/20, so the host cannot reach the pods",
					`use an address inside 172.21.208.0/20, e.g. "172.21.208.1"`),
				warn(nameCNIConfig, confPath+": capabilities.dns is true, so each pod gets the DNS servers edged passes instead of dns.nameservers; without clusterDNS that is 127.0.0.1, the container itself, and no name resolves",
					`remove "dns" from capabilities and list servers in dns.nameservers, or set modules.edged.tailoredKubeletConfig.clusterDNS`),
			}},
		{"an older file sorts first", func(h *host, c *Config) {
			h.files[`C:\Program Files\containerd\cni\conf\0-containerd-nat.conf.bak`] = "{}"
			h.files[`C:\Program Files\containerd\cni\conf\10-nat.conf`] = goodCNI
		}, nameCNIConfig,
			[]Row{warn(nameCNIConfig, "containerd loads only 0-containerd-nat.conf and ignores 10-nat.conf",
				"remove the files containerd ignores so that the one it loads is not in doubt")}},
		{"plugin binary missing", func(h *host, c *Config) { delete(h.files, binDir+`\nat.exe`); h.files[binDir+`\sdnbridge.exe`] = "MZ" }, nameCNIPlugin,
			[]Row{fail(nameCNIPlugin, `nat.exe not found in `+binDir,
				`copy the plugin executables (nat.exe from microsoft/windows-container-networking) into `+binDir)}},
		{"Linux-only sandbox image (edged's default)", func(h *host, c *Config) {
			c.SandboxImage = ""
			h.platforms = []Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm", Variant: "v7"}}
		}, nameSandbox,
			[]Row{fail(nameSandbox, "kubeedge/pause:3.6 has no Windows variant (it offers linux/amd64, linux/arm/v7), so no pod can start",
				"set modules.edged.podSandboxImage to registry.k8s.io/pause:3.10.2 (or a copy of it in your registry)")}},
		{"sandbox image without this host's build", func(h *host, c *Config) {
			c.SandboxImage = "mcr.microsoft.com/k8s/core/pause:1.2.0"
			h.platforms = []Platform{{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.1"}}
		}, nameSandbox,
			[]Row{fail(nameSandbox, "mcr.microsoft.com/k8s/core/pause:1.2.0 has no variant for this host's build 20348 (Windows Server 2022, ltsc2022) (it offers windows/amd64 10.0.17763.1); process isolation cannot run it",
				"set modules.edged.podSandboxImage to registry.k8s.io/pause:3.10.2 (or a copy of it in your registry)")}},
		// Windows Server 2025: the pause release preflight knows is judged
		// without a registry, and the fix names the release that has the
		// build; the configured default has it.
		{"Server 2025, pause 3.9 offline", func(h *host, c *Config) {
			h.version = hostprobe.WindowsVersion{Build: 26100}
			c.SandboxImage = "registry.k8s.io/pause:3.9"
			h.local = map[string]bool{}
			h.platErr = errors.New("dial tcp: i/o timeout")
		}, nameSandbox,
			[]Row{fail(nameSandbox, "registry.k8s.io/pause:3.9 has no variant for this host's build 26100 (Windows Server 2025, ltsc2025) (its Windows variants are for builds 17763, 20348); process isolation cannot run it",
				"set modules.edged.podSandboxImage to registry.k8s.io/pause:3.10.2 (or a copy of it in your registry)")}},
		{"Server 2025, pause 3.10.2, registry unreachable", func(h *host, c *Config) {
			h.version = hostprobe.WindowsVersion{Build: 26100}
			c.SandboxImage = config.WindowsSandboxImage
			h.platErr = errors.New("dial tcp: i/o timeout")
		}, nameSandbox,
			[]Row{pass(nameSandbox, "registry.k8s.io/pause:3.10.2 has a variant for this host's build 26100 (Windows Server 2025, ltsc2025), as its release publishes (its registry did not answer: dial tcp: i/o timeout)")}},
		{"Server 2025, pause 3.10.2 from the registry", func(h *host, c *Config) {
			h.version = hostprobe.WindowsVersion{Build: 26100}
			c.SandboxImage = config.WindowsSandboxImage
			h.platforms = []Platform{{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.8000"},
				{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.4000"}, {OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.6000"}}
		}, nameSandbox,
			[]Row{pass(nameSandbox, "registry.k8s.io/pause:3.10.2 has windows/amd64 10.0.26100.6000 for this host's build 26100 (Windows Server 2025, ltsc2025)")}},
		{"registry unreachable, known image", func(h *host, c *Config) {
			c.SandboxImage = "mcr.microsoft.com/oss/kubernetes/pause:3.10"
			h.platErr = errors.New("dial tcp: lookup mcr.microsoft.com: no such host")
		}, nameSandbox,
			[]Row{warn(nameSandbox, "mcr.microsoft.com/oss/kubernetes/pause:3.10: could not read its platforms (dial tcp: lookup mcr.microsoft.com: no such host); this image is known to have Windows variants", "")}},
		{"registry unreachable, unknown image", func(h *host, c *Config) {
			c.SandboxImage = "registry.k8s.io/pause:3.5"
			h.platErr = errors.New("dial tcp: i/o timeout")
		}, nameSandbox,
			[]Row{warn(nameSandbox, "registry.k8s.io/pause:3.5: could not read its platforms: dial tcp: i/o timeout",
				"make sure it has a windows/amd64 variant, or set modules.edged.podSandboxImage to registry.k8s.io/pause:3.10.2 (or a copy of it in your registry)")}},
		{"sandbox image imported, registry unreachable", func(h *host, c *Config) {
			c.SandboxImage = "registry.k8s.io/pause:3.9"
			h.local = map[string]bool{"registry.k8s.io/pause:3.9": true}
			h.platErr = errors.New("dial tcp: i/o timeout")
		}, nameSandbox,
			[]Row{pass(nameSandbox, "registry.k8s.io/pause:3.9 is in containerd's k8s.io namespace")}},
		{"sandbox image missing, registry unreachable", func(h *host, c *Config) {
			c.SandboxImage = "registry.k8s.io/pause:3.9"
			c.ImagesDir = `C:\etc\kubeedge\images`
			h.local = map[string]bool{}
			h.platErr = errors.New("dial tcp: i/o timeout")
		}, nameSandbox,
			[]Row{fail(nameSandbox, "registry.k8s.io/pause:3.9 is not in containerd and its registry does not answer (dial tcp: i/o timeout): no pod can start",
				"on a host with a registry, save it (docker save registry.k8s.io/pause:3.9 -o pause.tar, or ctr images export), copy the archive into the images folder beside edgecore.exe or into "+
					`C:\etc\kubeedge\images and run edgecore.exe images import <archive> (the node also imports it at its next start); or make the registry reachable`)}},
		{"sandbox image missing, registry answers", func(h *host, c *Config) {
			c.SandboxImage = "registry.k8s.io/pause:3.9"
			h.local = map[string]bool{}
			h.platforms = []Platform{{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2461"}}
		}, nameSandbox,
			[]Row{pass(nameSandbox, "registry.k8s.io/pause:3.9 has windows/amd64 10.0.20348.2461 for this host's build 20348 (Windows Server 2022, ltsc2022)")}},
		{"websocket port blocked", func(h *host, c *Config) {
			h.dialErr = map[string]error{"tcp 192.0.2.10:10000": errors.New("dial tcp 192.0.2.10:10000: i/o timeout")}
		}, "cloudcore websocket",
			[]Row{fail("cloudcore websocket", "192.0.2.10:10000 unreachable: dial tcp 192.0.2.10:10000: i/o timeout",
				"check modules.edgeHub.websocket.server, that cloudcore listens on port 10000 and that no firewall blocks it (Test-NetConnection 192.0.2.10 -Port 10000)")}},
		{"https server without port", func(h *host, c *Config) {
			c.CloudCore = cloudEndpoints(config.HubWebSocket, "192.0.2.10:10000", "https://cloud.example")
		}, "cloudcore https",
			[]Row{pass("cloudcore https", "cloud.example:443 reachable")}},
		{"websocket server not set", func(h *host, c *Config) {
			c.CloudCore = cloudEndpoints(config.HubWebSocket, "", "https://192.0.2.10:10002")
		}, "cloudcore websocket",
			[]Row{fail("cloudcore websocket", "modules.edgeHub.websocket.server is empty",
				"set modules.edgeHub.websocket.server to cloudcore's address and hub port, for example 192.168.1.10:10000, as `edgecore.exe join` writes it")}},
		{"websocket server with a scheme", func(h *host, c *Config) {
			c.CloudCore = cloudEndpoints(config.HubWebSocket, "wss://192.0.2.10:10000", "https://192.0.2.10:10002")
		}, "cloudcore websocket",
			[]Row{fail("cloudcore websocket",
				`modules.edgeHub.websocket.server "wss://192.0.2.10:10000" is not valid: expected HOST:PORT without a scheme, for example 192.168.1.10:10000`,
				"correct modules.edgeHub.websocket.server in the configuration file, or join again to rewrite it")}},
		{"http instead of https", func(h *host, c *Config) {
			c.CloudCore = cloudEndpoints(config.HubWebSocket, "192.0.2.10:10000", "http://192.0.2.10:10002")
		}, "cloudcore https",
			[]Row{fail("cloudcore https",
				`modules.edgeHub.httpServer "http://192.0.2.10:10002" is not valid: expected https://HOST:PORT with nothing after the port, for example https://192.168.1.10:10002`,
				"correct modules.edgeHub.httpServer in the configuration file, or join again to rewrite it")}},
		{"quic hub reachable", func(h *host, c *Config) {
			c.CloudCore = cloudEndpoints(config.HubQUIC, "192.0.2.10:10001", "https://192.0.2.10:10002")
			// The QUIC port answers on UDP only: a TCP probe would fail.
			h.dialErr = map[string]error{"tcp 192.0.2.10:10001": errors.New("connection refused")}
		}, "cloudcore quic",
			[]Row{pass("cloudcore quic", "192.0.2.10:10001 (QUIC) reachable")}},
		{"quic hub silent", func(h *host, c *Config) {
			c.CloudCore = cloudEndpoints(config.HubQUIC, "192.0.2.10:10001", "https://192.0.2.10:10002")
			h.dialErr = map[string]error{"quic 192.0.2.10:10001": errors.New("context deadline exceeded")}
		}, "cloudcore quic",
			[]Row{fail("cloudcore quic", "192.0.2.10:10001 (QUIC) unreachable: context deadline exceeded",
				"check modules.edgeHub.quic.server, that cloudcore's quic server is enabled (modules.cloudHub.quic in cloudcore.yaml) and listens on UDP port 10001, and that no firewall blocks UDP port 10001")}},
		{"clock behind the certificate", func(h *host, c *Config) {
			v := h.certs[`C:\etc\kubeedge\certs\server.crt`]
			v.NotBefore = now.Add(90 * time.Minute)
			h.certs[`C:\etc\kubeedge\certs\server.crt`] = v
		}, nameClock,
			[]Row{fail(nameClock, `the clock (2025-03-01 12:00:00Z) is 1h30m0s before C:\etc\kubeedge\certs\server.crt becomes valid (2025-03-01 13:30:00Z)`,
				"set the clock: w32tm /resync, or Set-Date if the host has no time source")}},
		{"certificate expired", func(h *host, c *Config) {
			v := h.certs[`C:\etc\kubeedge\certs\server.crt`]
			v.NotAfter = now.AddDate(0, 0, -2)
			h.certs[`C:\etc\kubeedge\certs\server.crt`] = v
		}, nameClock,
			[]Row{fail(nameClock, `C:\etc\kubeedge\certs\server.crt expired on 2025-02-27 12:00:00Z (the clock says 2025-03-01 12:00:00Z)`,
				"if the clock is right, rejoin the node with a token from keadm gettoken; if not, w32tm /resync")}},
		{"before join: no certificates", func(h *host, c *Config) { h.certs = nil }, nameClock,
			[]Row{pass(nameClock, `nothing to compare yet: no certificate at C:\etc\kubeedge\ca\rootCA.crt, C:\etc\kubeedge\certs\server.crt (join creates them)`)}},
		{"unreadable certificate", func(h *host, c *Config) {
			h.certErr = map[string]error{`C:\etc\kubeedge\ca\rootCA.crt`: fmt.Errorf("C:\\etc\\kubeedge\\ca\\rootCA.crt holds no readable certificate: %w", errors.New("x509: malformed certificate"))}
		}, nameClock,
			[]Row{warn(nameClock, `cannot read C:\etc\kubeedge\ca\rootCA.crt: C:\etc\kubeedge\ca\rootCA.crt holds no readable certificate: x509: malformed certificate`,
				"rejoin the node with a token from keadm gettoken to rewrite its certificates")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, c := healthyHost(), healthyConfig()
			tc.change(h, &c)
			rows := Run(context.Background(), c, h.probes())
			var got []Row
			for _, r := range rows {
				if r.Name == tc.check {
					got = append(got, r)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("rows for %q\n got: %q\nwant: %q", tc.check, got, tc.want)
			}
			for _, r := range rows {
				if r.Status == Fail && (r.Fix == "" || strings.ContainsAny(r.Fix, "\r\n")) {
					t.Errorf("FAIL row %q needs a one-line fix, has %q", r.Name, r.Fix)
				}
				if r.Name != tc.check && r.Status != Pass && !sideEffect(tc.name, r) {
					t.Errorf("changing %q also changed row %+v", tc.name, r)
				}
			}
		})
	}
}

// sideEffect allows the rows a change legitimately affects besides its own.
func sideEffect(caseName string, r Row) bool {
	switch caseName {
	case "containerd not running", "containerd without CRI v1", "no runtime endpoint", "a CRI server the node does not trust":
		return r.Name == nameCRINetwork
	case "build unreadable", "Server 2016", "client build", "Server 2025", "Server 2019":
		return r.Name == nameSandbox
	}
	return false
}

func TestCertificateProbeErrorsAreNotMissingFiles(t *testing.T) {
	// Only a missing file means "before join"; other errors must show.
	err := fmt.Errorf("open x: %w", fs.ErrPermission)
	h, c := healthyHost(), healthyConfig()
	h.certErr = map[string]error{`C:\etc\kubeedge\ca\rootCA.crt`: err}
	for _, r := range Run(context.Background(), c, h.probes()) {
		if r.Name == nameClock && r.Status == Pass {
			t.Errorf("unreadable certificate passed: %+v", r)
		}
	}
}
