package join

import (
	"fmt"
	"net/netip"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// flagServices is the flag that errors about Services point at.
const flagServices = "--services"

// decideServices settles the switch of Services at the node (config's
// edgeServices) once the pod network is decided: on when join writes the
// network, as --services says otherwise. On, the pods' DNS server is the
// node's responder at the network's host address; the network is
// cni-config's when join writes none, and without a record of one the
// node would have no network to serve Services on, which is refused.
func (j *Join) decideServices() error {
	set, _ := config.ParseSettings(j.o.Set)
	for _, s := range set {
		if s.Path == "featureGates."+config.GateServices {
			// The operator's --set names the switch: it stands.
			if config.ServicesOf(j.cfg).On {
				j.servicesReason = "on, as --set says"
			} else {
				j.servicesReason = "off, as --set says"
			}
			return nil
		}
	}
	on := j.net != nil
	if j.o.Services != nil {
		on = *j.o.Services
	}
	if !on {
		if j.o.Services != nil {
			config.SetServices(j.cfg, false, netip.Addr{})
			j.servicesReason = "off, as " + flagServices + "=false says"
		} else {
			j.servicesReason = "off: join writes no pod network (give --mode, or " + flagServices + " once cni-config has written one)"
		}
		return j.render()
	}
	var host netip.Addr
	if j.net != nil {
		host = j.net.HostIP()
	} else {
		l := j.o.Layout
		st, ok, err := podnet.ReadState(j.sys.PodNet.Env.FS, podnet.StateFile(l))
		if err != nil || !ok || st.NetworkName() == "" {
			why := fmt.Sprintf("no pod network is recorded in %s", podnet.StateFile(l))
			if err != nil {
				why = err.Error()
			}
			return &steps.StepError{Verb: "join", Index: 1, Total: numJoinSteps, Step: stepValidate,
				Err: fmt.Errorf("%s: Services are served on the pod network edgecore knows, and %s", flagServices, why),
				Fix: "give --mode (and --subnet) for join to write the pod network, run `edgecore.exe cni-config` first, or leave out " + flagServices}
		}
		host, _ = st.HostAddress()
	}
	config.SetServices(j.cfg, true, host)
	j.servicesReason = "on: ClusterIP and NodePort for the node's pods, and the cluster's DNS names"
	if host.IsValid() {
		j.servicesReason += fmt.Sprintf(" answered at %s", host)
	}
	return j.render()
}

// render writes the configuration file's content again after a change.
func (j *Join) render() error {
	data, err := config.JoinFile(j.cfg, j.hubAddr, "`"+config.ExecutableName(j.goos)+" join`")
	if err != nil {
		return err
	}
	j.data = data
	return nil
}
