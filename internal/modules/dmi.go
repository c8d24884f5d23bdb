package modules

import (
	"net"

	"k8s.io/klog/v2"

	"github.com/kubeedge/kubeedge/edge/pkg/devicetwin/dmiserver"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
)

// dmiListener is the DMI server's listener (dmiserver.Listen, the hook of
// patches/0001): a named pipe is served open only to SYSTEM and
// Administrators, because mappers on it read and change device twins.
// The pipe is the one the configuration names (deviceTwin.dmiSockPath, an
// npipe:// address), else the one upstream derives for Windows
// (\\.\pipe\edgecore-dmi); upstream serves its pipe with go-winio's
// default descriptor, which lets Everyone read. Any other address goes to
// upstream's listener.
func dmiListener(listenPipe func(name, sddl string) (net.Listener, error), upstream func(configured, endpoint string) (net.Listener, error)) func(string, string) (net.Listener, error) {
	return func(configured, endpoint string) (net.Listener, error) {
		name, ok := config.PipeName(configured)
		if !ok {
			name, ok = config.PipeName(endpoint)
		}
		if ok {
			l, err := listenPipe(name, acl.PipeSDDL)
			if err == nil {
				klog.Infof("DMI server listens on named pipe %s", pipe.Path(name))
			}
			return l, err
		}
		return upstream(configured, endpoint)
	}
}

// installDMIListener puts dmiListener in place; it must run before the
// device twin module starts its DMI server.
func installDMIListener() {
	dmiserver.Listen = dmiListener(pipe.Listen, dmiserver.Listen)
}
