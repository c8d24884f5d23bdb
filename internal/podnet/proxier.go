package podnet

import (
	"errors"
	"fmt"
	"io"

	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// RemoveProxierObjects removes what the node's kernelspace proxier
// (Services at the node) programmed on the pod network st records: every
// HNS load balancer over one of the network's endpoints, then the
// network's remote endpoints (stand-ins for pods of other hosts, which
// only the proxier creates). The endpoints of the node's pods and the
// host endpoint stay: they are the CNI plugin's and cni-config's. A host
// without HNS has nothing to remove.
func RemoveProxierObjects(out io.Writer, h HNS, st State) error {
	name := st.NetworkName()
	if name == "" {
		fmt.Fprintln(out, "no pod network recorded: no load balancer of the node's to remove")
		return nil
	}
	n, err := h.NetworkByName(name)
	switch {
	case errors.Is(err, hns.ErrNotWindows) || errors.Is(err, hns.ErrUnavailable):
		// Without HNS no load balancer can be there.
		fmt.Fprintf(out, "no HNS on this host (%v): no load balancer of the node's to remove\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("look up HNS network %q: %w", name, err)
	case n == nil:
		fmt.Fprintf(out, "HNS network %q is gone: no load balancer of the node's to remove\n", name)
		return nil
	}
	eps, err := h.NetworkEndpoints(n.ID)
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, e := range eps {
		ours[e.ID] = true
	}
	lbs, err := h.LoadBalancers()
	if err != nil {
		return err
	}
	removed := 0
	for _, lb := range lbs {
		over := false
		for _, id := range lb.EndpointIDs {
			over = over || ours[id]
		}
		if !over {
			continue
		}
		if err := h.DeleteLoadBalancer(lb.ID); err != nil {
			return err
		}
		removed++
	}
	remote := 0
	for _, e := range eps {
		if !e.Remote {
			continue
		}
		if err := h.DeleteEndpoint(e.ID); err != nil {
			return fmt.Errorf("remove remote HNS endpoint %s (%s): %w", e.ID, e.IP, err)
		}
		remote++
	}
	fmt.Fprintf(out, "removed %d HNS load balancers and %d remote endpoints the node's proxier programmed on %q\n", removed, remote, name)
	return nil
}
