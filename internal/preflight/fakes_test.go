package preflight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/envcheck"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const goodCNI = `{
  "cniVersion": "0.2.0", "name": "nat", "type": "nat",
  "ipam": {"subnet": "10.244.1.0/24", "routes": [{"gw": "10.244.1.1"}]},
  "dns": {"nameservers": ["10.0.0.2"]},
  "capabilities": {"portMappings": true}
}`

// host is a fake Windows host; healthyHost passes every check, and each
// test changes the one fact it is about.
type host struct {
	version   hostprobe.WindowsVersion
	versionEr error
	features  bool
	elevated  bool
	procs     []proc.Process
	// services are the running services' processes; programs the
	// processes' programs, and changeable why a program file others may
	// change (envcheck.Host).
	services   map[int]string
	programs   map[int]string
	changeable map[string]string
	free       uint64
	size       uint64
	existing   map[string]bool
	cri        hostprobe.CRIStatus
	criErr     error
	files      map[string]string // path -> content; dirs are derived
	platforms  []Platform
	platErr    error
	// local are the images containerd holds; nil: containerd is not
	// asked (the probe fails).
	local   map[string]bool
	dialErr map[string]error // by "tcp host:port" or "quic host:port"
	certs   map[string]Validity
	certErr map[string]error
	// svc is the edgecore service as the service manager reports it;
	// the zero value: not installed.
	svc    service.Status
	svcErr error
}

func healthyConfig() Config {
	return Config{
		CRIEndpoint:  "npipe://./pipe/containerd-containerd",
		SandboxImage: "registry.k8s.io/pause:3.9",
		CloudCore:    cloudEndpoints(config.HubWebSocket, "192.0.2.10:10000", "https://192.0.2.10:10002"),
		Certificates: []string{`C:\etc\kubeedge\ca\rootCA.crt`, `C:\etc\kubeedge\certs\server.crt`},
		RootDir:      `C:\var\lib\kubelet`,
		// The kubelet's defaults, as the generated configuration has them.
		EvictionHard: map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "imagefs.available": "15%"},
	}
}

// cloudEndpoints are the endpoints of an edgeHub section with the hub
// protocol's server and httpServer, as FromConfig reads them.
func cloudEndpoints(protocol, server, httpServer string) []Endpoint {
	return cloudCoreEndpoints(&v1alpha2.EdgeCoreConfig{Modules: &v1alpha2.Modules{EdgeHub: &v1alpha2.EdgeHub{
		Enable:     true,
		HTTPServer: httpServer,
		WebSocket:  &v1alpha2.EdgeHubWebSocket{Enable: protocol == config.HubWebSocket, Server: server},
		Quic:       &v1alpha2.EdgeHubQUIC{Enable: protocol == config.HubQUIC, Server: server},
	}}})
}

func healthyHost() *host {
	return &host{
		version:  hostprobe.WindowsVersion{ProductName: "Windows Server 2022 Datacenter", Build: 20348, UBR: 2227},
		features: true,
		elevated: true,
		procs: []proc.Process{
			{PID: 0, Name: "[System Process]"}, {PID: 4, Name: "System"},
			{PID: 812, Name: "containerd.exe"}, {PID: 900, Name: "kubelet-helper.exe"},
		},
		free:     40 * GiB,
		size:     100 * GiB,
		existing: map[string]bool{`C:\`: true, `C:\var`: true, `C:\var\lib`: true, `C:\var\lib\kubelet`: true},
		cri: hostprobe.CRIStatus{RuntimeName: "containerd", RuntimeVersion: "v1.7.13", RuntimeAPIVersion: "v1",
			Conditions: []hostprobe.CRICondition{{Type: "RuntimeReady", Status: true}, {Type: "NetworkReady", Status: true}}},
		files: map[string]string{
			`C:\Program Files\containerd\cni\conf\0-containerd-nat.conf`: goodCNI,
			`C:\Program Files\containerd\cni\bin\nat.exe`:                "MZ",
		},
		platforms: []Platform{
			{OS: "linux", Architecture: "amd64"},
			{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.4737"},
			{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.1906"},
		},
		certs: map[string]Validity{
			`C:\etc\kubeedge\ca\rootCA.crt`:    {NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.AddDate(9, 0, 0)},
			`C:\etc\kubeedge\certs\server.crt`: {NotBefore: now.AddDate(0, -1, 0), NotAfter: now.AddDate(1, 0, 0)},
		},
	}
}

func (h *host) probes() Probes {
	return Probes{
		// A host where none of the node's directories exists yet.
		Protect:           aclHost(nil),
		WindowsVersion:    func() (hostprobe.WindowsVersion, error) { return h.version, h.versionEr },
		ContainersFeature: func() (bool, error) { return h.features, nil },
		Elevated:          func() (bool, error) { return h.elevated, nil },
		Processes:         func() ([]proc.Process, error) { return h.procs, nil },
		Programs: &envcheck.Host{
			Services: func() (map[int]string, error) { return h.services, nil },
			Identify: func(pid int) (proc.Identity, error) {
				if img, ok := h.programs[pid]; ok {
					return proc.Identity{PID: pid, Image: img}, nil
				}
				return proc.Identity{}, fmt.Errorf("process %d: Access is denied.", pid)
			},
			Changeable: func(path string) (string, error) { return h.changeable[path], nil },
		},
		FreeDisk: func(dir string) (uint64, error) {
			if !h.existing[dir] {
				return 0, fmt.Errorf("free space asked for %s, which does not exist", dir)
			}
			return h.free, nil
		},
		DiskSize: func(dir string) (uint64, error) {
			if !h.existing[dir] {
				return 0, fmt.Errorf("volume size asked for %s, which does not exist", dir)
			}
			return h.size, nil
		},
		Exists: func(path string) (bool, error) { return h.existing[path], nil },
		CRI: func(ctx context.Context, endpoint string) (hostprobe.CRIStatus, error) {
			if _, ok := ctx.Deadline(); !ok {
				return hostprobe.CRIStatus{}, errors.New("called without a deadline")
			}
			return h.cri, h.criErr
		},
		ReadDir: func(dir string) ([]string, error) {
			var names []string
			for p := range h.files {
				if rest, ok := strings.CutPrefix(p, dir+`\`); ok && !strings.Contains(rest, `\`) {
					names = append(names, rest)
				}
			}
			if names == nil {
				return nil, fmt.Errorf("open %s: %w", dir, fs.ErrNotExist)
			}
			return names, nil
		},
		ReadFile: func(path string) ([]byte, error) {
			s, ok := h.files[path]
			if !ok {
				return nil, fs.ErrNotExist
			}
			return []byte(s), nil
		},
		ImagePlatforms: func(ctx context.Context, image string) ([]Platform, error) { return h.platforms, h.platErr },
		ImagePresent: func(ctx context.Context, endpoint, image string) (bool, error) {
			if _, ok := ctx.Deadline(); !ok {
				return false, errors.New("called without a deadline")
			}
			if h.local == nil {
				return false, errors.New("containerd's images are not part of this case")
			}
			return h.local[image], nil
		},
		Dial: func(ctx context.Context, address string) error {
			if _, ok := ctx.Deadline(); !ok {
				return errors.New("dialled without a deadline")
			}
			return h.dialErr["tcp "+address]
		},
		DialQUIC: func(ctx context.Context, address string) error {
			if _, ok := ctx.Deadline(); !ok {
				return errors.New("dialled without a deadline")
			}
			return h.dialErr["quic "+address]
		},
		Certificate: func(path string) (Validity, error) {
			if err := h.certErr[path]; err != nil {
				return Validity{}, err
			}
			v, ok := h.certs[path]
			if !ok {
				return Validity{}, fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
			}
			return v, nil
		},
		Now: func() time.Time { return now },
		Service: func(name string) (service.Status, error) {
			st := h.svc
			st.Name = name
			return st, h.svcErr
		},
	}
}
