package preflight

import (
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/kubeedge/api/apis/common/constants"

	"github.com/kubeedge-windows/edgecore/config/cni"
)

// Config is what the checks need from edgecore's configuration.
type Config struct {
	// CRIEndpoint is modules.edged.containerRuntimeEndpoint, e.g.
	// npipe://./pipe/containerd-containerd.
	CRIEndpoint string
	// CNIConfDir and CNIBinDir are containerd's CNI directories; empty
	// means containerd's Windows defaults.
	CNIConfDir string
	CNIBinDir  string
	// ClusterDNS is modules.edged.tailoredKubeletConfig.clusterDNS.
	ClusterDNS []string
	// SandboxImage is modules.edged.podSandboxImage; empty means edged's
	// default.
	SandboxImage string
	// CloudCore are the cloudcore addresses edgehub connects to.
	CloudCore []Endpoint
	// Certificates are the PEM files whose validity the clock must fall
	// in: edgeHub.tlsCaFile and edgeHub.tlsCertFile.
	Certificates []string
	// RootDir is modules.edged.rootDirectory; the disk it is on holds pod
	// volumes and logs.
	RootDir string
	// Timeout bounds each network probe; zero means DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds each network probe, so that an unreachable
// cloudcore costs seconds, not the operating system's minutes.
const DefaultTimeout = 5 * time.Second

// Endpoint is a cloudcore address and the config field it comes from, so a
// failed row can say which field to correct.
type Endpoint struct {
	Name    string
	Field   string
	Address string // host:port
}

// CloudCoreEndpoints builds the endpoints from edgeHub.websocket.server
// ("host:port") and edgeHub.httpServer ("https://host:port").
func CloudCoreEndpoints(websocketServer, httpServer string) []Endpoint {
	return []Endpoint{
		{Name: "cloudcore websocket", Field: "modules.edgeHub.websocket.server", Address: hostPort(websocketServer, "")},
		{Name: "cloudcore https", Field: "modules.edgeHub.httpServer", Address: hostPort(httpServer, "443")},
	}
}

// hostPort accepts "host:port" or a URL and returns "host:port", or the
// input unchanged for the dial to report.
func hostPort(s, defaultPort string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	if u.Port() == "" && defaultPort != "" {
		return net.JoinHostPort(u.Hostname(), defaultPort)
	}
	return u.Host
}

func (c Config) withDefaults() Config {
	if c.CNIConfDir == "" {
		c.CNIConfDir = cni.DefaultConfDir
	}
	if c.CNIBinDir == "" {
		c.CNIBinDir = cni.DefaultBinDir
	}
	if c.SandboxImage == "" {
		c.SandboxImage = constants.DefaultPodSandboxImage
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}
