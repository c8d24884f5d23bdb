package config

import (
	"fmt"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// KubeletServerPipe is the named pipe the kubelet's handlers are served on
// under Windows: \\.\pipe\edgecore-kubelet.
const KubeletServerPipe = "edgecore-kubelet"

// maxUnixSocketPath is the longest path Linux binds an AF_UNIX socket to
// (sun_path holds 108 bytes with its terminating NUL).
const maxUnixSocketPath = 107

// KubeletServer is where the node serves the kubelet's handlers (/exec,
// /attach, /containerLogs, /logs, /stats, pprof): upstream serves them on
// TCP at tailoredKubeletConfig.address:readOnlyPort (127.0.0.1:10350)
// without authentication, so any local account could exec into any pod.
// edgecore serves them where only SYSTEM and Administrators (root on
// Linux) can connect, and edgeStream, edged's health check and the
// metaserver dial the same place (patches/0010 and 0011). readOnlyPort
// still switches the server on, but no TCP port is opened.
type KubeletServer struct {
	// Pipe is the named pipe's name on Windows, "" elsewhere.
	Pipe string
	// Socket is the Unix socket's path elsewhere, "" on Windows; it lies
	// in SocketDir, which only root may enter.
	Socket    string
	SocketDir string
}

// String is the endpoint as an operator would address it.
func (s KubeletServer) String() string {
	if s.Pipe != "" {
		return `\\.\pipe\` + s.Pipe
	}
	return "unix://" + s.Socket
}

// KubeletServerOf returns where the node configured by c serves the
// kubelet's handlers on goos. On Linux the socket lies in a folder of its
// own beside the database, which holds the node's state already.
func KubeletServerOf(c *v1alpha2.EdgeCoreConfig, goos string) KubeletServer {
	if goos == Windows {
		return KubeletServer{Pipe: KubeletServerPipe}
	}
	dir := ospath.Join(goos, ospath.Dir(goos, c.DataBase.DataSource), "kubelet-server")
	return KubeletServer{Socket: ospath.Join(goos, dir, "kubelet.sock"), SocketDir: dir}
}

// validateKubeletServer refuses a configuration under which the kubelet
// server would not run, or could not be bound.
func validateKubeletServer(c *v1alpha2.EdgeCoreConfig, goos string) field.ErrorList {
	var errs field.ErrorList
	if c.Modules == nil || c.Modules.Edged == nil || !c.Modules.Edged.Enable || c.Modules.Edged.TailoredKubeletConfig == nil {
		return nil
	}
	k := c.Modules.Edged.TailoredKubeletConfig
	where := KubeletServerOf(c, goos)
	if k.ReadOnlyPort == 0 {
		// Upstream's edged waits for the server's health check before it
		// syncs any pod, so a node without it never runs a pod.
		errs = append(errs, field.Invalid(field.NewPath("modules", "edged", "tailoredKubeletConfig", "readOnlyPort"), k.ReadOnlyPort,
			fmt.Sprintf("the kubelet server must run: edged starts pods only once it answers, and kubectl logs and exec reach pods through it; "+
				"fix: set it to 10350 (edgecore serves the server on %s, which only administrators can open, not on this TCP port)", where)))
	}
	if where.Socket != "" && len(where.Socket) > maxUnixSocketPath {
		errs = append(errs, field.Invalid(field.NewPath("database", "dataSource"), c.DataBase.DataSource,
			fmt.Sprintf("the kubelet server's socket beside it, %s, is longer than the %d bytes a Unix socket path may have; fix: keep the database in a shorter folder such as /var/lib/kubeedge",
				where.Socket, maxUnixSocketPath)))
	}
	return errs
}
