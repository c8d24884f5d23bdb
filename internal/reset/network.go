package reset

import (
	"context"
	"fmt"
	"io"

	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// networkResetSteps remove the CNI configuration join wrote, as cni-config's
// record names it, before the runtime join installed (whose folder holds
// the record); none when join wrote none.
func (r *reset) networkResetSteps() []steps.Step {
	fsys := r.sys.PodNet.Env.FS
	st, ok, err := podnet.Written(fsys, r.layout, join.WrittenBy)
	if err != nil {
		return []steps.Step{{
			Name:        "keep the pod network",
			Description: "keep the CNI configuration: " + steps.FirstLine(err, ""),
			Do: func(_ context.Context, out io.Writer) error {
				fmt.Fprintf(out, "kept the CNI configuration: %v\n", err)
				return nil
			},
		}}
	}
	if !ok {
		return nil
	}
	what := "remove " + st.CNIConfFile + ", which join wrote, and its record " + podnet.StateFile(r.layout)
	if n := st.Network; n != nil && n.Created {
		what += fmt.Sprintf(" (the record stays while it names the HNS network %q: reset --network removes both)", n.Name)
	}
	return []steps.Step{{
		Name:        "remove the pod network join wrote",
		Description: what,
		Do: func(_ context.Context, out io.Writer) error {
			if err := podnet.RemoveWritten(out, fsys, r.layout, st); err != nil {
				return steps.WithFix(err, fixResetAgain)
			}
			r.networkRemoved = true
			if n := st.Network; n != nil && n.Created {
				r.keptHNS = n.Name
			}
			return nil
		},
	}}
}

// proxierSteps remove what the node's kernelspace proxier programmed on
// the recorded pod network (Services at the node): its HNS load balancers
// and remote endpoints, once the service is stopped and can no longer
// program them again. None when no pod network is recorded.
func (r *reset) proxierSteps() []steps.Step {
	fsys := r.sys.PodNet.Env.FS
	st, ok, err := podnet.ReadState(fsys, podnet.StateFile(r.layout))
	if err != nil || !ok || st.NetworkName() == "" {
		return nil
	}
	return []steps.Step{{
		Name: "remove the Services' load balancers",
		Description: fmt.Sprintf("remove the HNS load balancers over endpoints of %q and its remote endpoints, which the node's proxier programmed; "+
			"the endpoints of pods and of the host stay", st.NetworkName()),
		Do: func(_ context.Context, out io.Writer) error {
			return steps.WithFix(podnet.RemoveProxierObjects(out, r.sys.PodNet.Env.HNS, st), fixResetAgain)
		},
	}}
}
