package config

import (
	"net"
	"os"
	"regexp"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Host is what the generated configuration takes from the machine it is
// meant for. Keeping it as data lets tests produce Windows configurations on
// any build host.
type Host struct {
	GOOS     string
	Hostname string // as the OS reports it; Windows reports upper case
	NodeIP   string // address of the interface that carries the default route
	// ProgramFiles and SystemDrive are %ProgramFiles% and %SystemDrive% on
	// Windows ("" elsewhere, or when unset): containerd and its CNI
	// directories live under the first, edgecore's own files on the second.
	ProgramFiles string
	SystemDrive  string
	// SystemRoot, ProgramFilesX86, ProgramData and Public are
	// %SystemRoot%, %ProgramFiles(x86)%, %ProgramData% and %PUBLIC% on
	// Windows ("" elsewhere, or when unset): with ProgramFiles they say
	// where Windows' own folders are (Layout.Windows), which the node
	// never restricts. %PUBLIC% is C:\Users\Public: its folder holds the
	// user profiles.
	SystemRoot      string
	ProgramFilesX86 string
	ProgramData     string
	Public          string
}

// DefaultNodeName is used when the host name has nothing usable in it.
const DefaultNodeName = "edge-node"

var invalidNodeNameRun = regexp.MustCompile(`[^a-z0-9.-]+`)

// NodeName derives a valid node name (a lowercase RFC 1123 subdomain) from a
// host name: Windows host names are upper case and may hold underscores,
// which the API server refuses.
func NodeName(hostname string) string {
	n := strings.ToLower(strings.TrimSpace(hostname))
	n = invalidNodeNameRun.ReplaceAllString(n, "-")
	n = strings.Trim(n, ".-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], ".-")
	}
	if n == "" {
		return DefaultNodeName
	}
	return n
}

// CurrentHost reads the facts of the running machine. Probe failures leave
// the field empty; the generator then keeps upstream's default.
func CurrentHost(goos string) Host {
	h := Host{GOOS: goos}
	if goos == Windows {
		h.ProgramFiles = os.Getenv("ProgramFiles")
		h.SystemDrive = os.Getenv("SystemDrive")
		h.SystemRoot = os.Getenv("SystemRoot")
		h.ProgramFilesX86 = os.Getenv("ProgramFiles(x86)")
		h.ProgramData = os.Getenv("ProgramData")
		h.Public = os.Getenv("PUBLIC")
	}
	if name, err := os.Hostname(); err == nil {
		h.Hostname = name
	}
	if ip, err := DefaultRouteIP(""); err == nil {
		h.NodeIP = ip.String()
	}
	return h
}

// DefaultRouteIP returns the local address the routing table picks for
// target ("host:port"), or for the default route when target is empty. A UDP
// "connect" only consults the routing table; it sends no packet. Towards the
// cloudcore address this is exactly the address the node reaches the cloud
// from.
func DefaultRouteIP(target string) (net.IP, error) {
	if target == "" {
		// TEST-NET-1 (RFC 5737): never routed anywhere, so only a default
		// route can match it.
		target = "192.0.2.1:9"
	}
	conn, err := net.Dial("udp", target)
	if err == nil {
		defer conn.Close()
		if addr, ok := conn.LocalAddr().(*net.UDPAddr); ok && !addr.IP.IsUnspecified() && !addr.IP.IsLoopback() {
			return addr.IP, nil
		}
	}
	// No default route: fall back to the first global unicast address of an
	// interface that is up.
	return utilnet.ChooseHostInterface()
}
