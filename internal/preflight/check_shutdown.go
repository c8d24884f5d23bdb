package preflight

import (
	"errors"
	"fmt"

	"github.com/kubeedge-windows/edgecore/windows/service"
)

const nameShutdown = "Host shutdown"

// checkHostShutdown compares how long Windows waits for the edgecore
// service at a host shutdown (its pre-shutdown time-out) with what the
// configuration's graceful node shutdown needs: the pods' grace periods,
// then edgecore's own stop. A service that would be cut short fails, and
// the node refuses to start as such a service.
func checkHostShutdown(cfg Config, p Probes) []Row {
	ns := cfg.NodeShutdown
	if ns == nil {
		// Not a Windows configuration: the Linux kubelet waits for
		// systemd-logind, which the operator configures.
		return nil
	}
	if p.Service == nil {
		return []Row{notProbed(nameShutdown)}
	}
	st, err := p.Service(service.DefaultName)
	if err != nil {
		return []Row{couldNotCheck(nameShutdown, err)}
	}
	need := service.PreShutdownTimeoutFor(ns.Grace)
	if !st.Installed {
		return []Row{skip(nameShutdown, fmt.Sprintf("the %s service is not installed yet: join or `edgecore.exe service install` "+
			"makes a host shutdown wait up to %v for it", service.DefaultName, need))}
	}
	if st.PreShutdownTimeout == 0 {
		return []Row{couldNotCheck(nameShutdown, errors.New("the service manager did not report the service's pre-shutdown time-out"))}
	}
	var short *service.PreShutdownError
	if errors.As(service.CheckPreShutdown(service.DefaultName, st.PreShutdownTimeout, ns.Grace, ns.Field), &short) {
		return []Row{fail(nameShutdown, short.Detail(), short.Fix())}
	}
	if ns.Grace == 0 {
		return []Row{pass(nameShutdown, fmt.Sprintf("graceful node shutdown is off: pods are left to the runtime and start again with the node; "+
			"Windows waits up to %v for edgecore's own stop", st.PreShutdownTimeout))}
	}
	return []Row{pass(nameShutdown, fmt.Sprintf("the kubelet stops the pods by priority within %v (%s), then edgecore stops; Windows waits up to %v",
		ns.Grace, ns.Field, st.PreShutdownTimeout))}
}
