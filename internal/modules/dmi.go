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
// patches/0001): a named pipe address is served on that pipe, open only to
// SYSTEM and Administrators, because mappers on it read and change device
// twins; any other address goes to upstream's socket listener.
func dmiListener(listenPipe func(name, sddl string) (net.Listener, error), upstream func(string) (net.Listener, error)) func(string) (net.Listener, error) {
	return func(addr string) (net.Listener, error) {
		if name, ok := config.PipeName(addr); ok {
			l, err := listenPipe(name, acl.PipeSDDL)
			if err == nil {
				klog.Infof("DMI server listens on named pipe %s", pipe.Path(name))
			}
			return l, err
		}
		return upstream(addr)
	}
}

// installDMIListener puts dmiListener in place; it must run before the
// device twin module starts its DMI server.
func installDMIListener() {
	dmiserver.Listen = dmiListener(pipe.Listen, dmiserver.ListenUnix)
}
