package preflight

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

const (
	nameCRI        = "containerd CRI"
	nameCRINetwork = "CRI network"
)

func checkCRI(ctx context.Context, cfg Config, p Probes) []Row {
	if p.CRI == nil {
		return []Row{notProbed(nameCRI), notProbed(nameCRINetwork)}
	}
	if strings.TrimSpace(cfg.CRIEndpoint) == "" {
		return []Row{
			fail(nameCRI, "modules.edged.containerRuntimeEndpoint is empty",
				"set it to containerd's pipe: npipe://./pipe/containerd-containerd"),
			warn(nameCRINetwork, "not checked: no runtime to ask", ""),
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	st, err := p.CRI(ctx, cfg.CRIEndpoint)
	// A server the node does not trust fails, before or after join: join
	// refuses it, and the node would not start on it.
	var refused *servertrust.RefusedError
	if errors.As(err, &refused) {
		return []Row{
			fail(nameCRI, oneLine(refused.Problem()), refused.Fix),
			warn(nameCRINetwork, "not checked: the runtime's server is not trusted", ""),
		}
	}
	if err != nil && cfg.BundledRuntime != "" {
		return []Row{
			warn(nameCRI, cfg.CRIEndpoint+": no runtime answers yet: "+oneLine(err.Error()),
				"join installs containerd from "+cfg.BundledRuntime+" as the containerd service; a host with a containerd of its own keeps it: start it (Start-Service containerd)"),
			skip(nameCRINetwork, "join writes the pod network (its --mode and --subnet flags)"),
		}
	}
	if err != nil {
		fix := "start containerd (Start-Service containerd) and check that modules.edged.containerRuntimeEndpoint is its address"
		if errors.Is(err, hostprobe.ErrCRIv1Unsupported) {
			fix = "upgrade containerd to 1.6 or later; edged speaks CRI v1 only"
		}
		return []Row{
			fail(nameCRI, cfg.CRIEndpoint+": "+oneLine(err.Error()), fix),
			warn(nameCRINetwork, "not checked: the runtime did not answer", ""),
		}
	}
	runtime := strings.TrimSpace(fmt.Sprintf("%s %s", st.RuntimeName, st.RuntimeVersion))
	if st.RuntimeAPIVersion != "" {
		runtime += " (CRI " + st.RuntimeAPIVersion + ")"
	}
	runtime += " at " + cfg.CRIEndpoint
	rows := []Row{pass(nameCRI, runtime+": RuntimeReady")}
	if c, ok := condition(st, "RuntimeReady"); !ok || !c.Status {
		rows[0] = fail(nameCRI, runtime+": "+describe(c, ok, "RuntimeReady"),
			"read containerd's log for the cause, then Restart-Service containerd")
	}
	if c, ok := condition(st, "NetworkReady"); !ok || !c.Status {
		rows = append(rows, fail(nameCRINetwork, describe(c, ok, "NetworkReady")+" (containerd found no usable CNI config or plugin)",
			"write the CNI config with edgecore.exe cni-config, then Restart-Service containerd"))
	} else {
		rows = append(rows, pass(nameCRINetwork, "NetworkReady"))
	}
	return rows
}

func condition(st hostprobe.CRIStatus, typ string) (hostprobe.CRICondition, bool) {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return hostprobe.CRICondition{}, false
}

func describe(c hostprobe.CRICondition, ok bool, typ string) string {
	if !ok {
		return typ + " is not reported"
	}
	s := typ + " is false"
	if why := strings.TrimSpace(strings.Trim(c.Reason+": "+c.Message, ": ")); why != "" {
		s += ": " + oneLine(why)
	}
	return s
}
