package join

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// PodNetHost is the host as the pod network sees it: the facts
// podnet.Options.Complete reads (resolvers, addresses, adapters) and the
// HNS, files and containerd the network is written to.
type PodNetHost struct {
	Facts podnet.HostFacts
	Env   podnet.Env
}

// WrittenBy is join's name in cni-config's record: reset removes the CNI
// configuration recorded under it, and nothing cni-config wrote.
const WrittenBy = "join"

const stepNetwork = "write the pod network"

// decideNetwork works out, after the runtime, the pod network join writes
// through cni-config's own rules (package podnet): always with the bundled
// runtime, whose containerd has no other; with the host's runtime only when
// --mode is given, as `edgecore.exe cni-config` would write it. Bad input is
// reported as the failure of join's first step, naming the flag.
func (j *Join) decideNetwork() error {
	n := j.o.Network
	n.Mode = strings.ToLower(strings.TrimSpace(n.Mode))
	bundled := j.rt != nil && j.rt.Installs()
	if !bundled && n.Mode == "" {
		j.netReason = "the host's own CNI configuration is used (give --mode to have join write one)"
		return nil
	}
	fail := func(err error) error {
		return &steps.StepError{Verb: "join", Index: 1, Total: numJoinSteps, Step: stepValidate, Err: err, Fix: steps.Fix(err)}
	}
	l := j.o.Layout
	if n.Mode == "" {
		// The offline network: win-bridge is in the bundle, Microsoft's
		// nat.exe is not (docs/runtime.md).
		n.Mode = cni.ModeL2Bridge
	}
	if bundled {
		if n.L2Bridge.Plugin == "" {
			n.L2Bridge.Plugin = cni.PluginWinBridge
		}
		// The installation writes config.toml already naming the CNI
		// folders; it is its to write and remove.
		n.ContainerdConfig = ""
	}
	n.WrittenBy = WrittenBy
	facts := j.sys.PodNet.Facts
	facts.PodCIDR = func(string, config.Host) (string, error) {
		return "", &cni.FlagError{Flag: cni.FlagSubnet, Problem: "is required: join writes the pod network before the node exists, so its pod range cannot be read from the cluster",
			Fix: "pass " + cni.FlagSubnet + " with this node's pod range, e.g. " + cni.FlagSubnet + " 10.244.2.0/24"}
	}
	n.Facts = facts
	if err := n.Complete(&deps.Dependencies{Host: j.o.Host, Layout: l}); err != nil {
		return fail(err)
	}
	if err := n.Validate(); err != nil {
		return fail(err)
	}
	output := n.Output
	if ok, err := hostfs.Exists(j.sys.FS, output); err != nil {
		return fail(err)
	} else if ok {
		if st, mine, _ := podnet.Written(j.sys.PodNet.Env.FS, l, WrittenBy); mine && ospath.Same(j.goos, st.CNIConfFile, output) {
			return fail(steps.WithFix(fmt.Errorf("%s exists: an earlier installation's join wrote it", output), fixResetFirst))
		}
		fix := "move it away if nothing uses it, then run join again"
		if !bundled {
			fix += ", or leave out " + cni.FlagMode + " to keep the host's network"
		}
		return fail(steps.WithFix(fmt.Errorf("%s already exists: join writes a pod network only where there is none", output), fix))
	}
	s, err := podnet.Prepare(n, j.sys.PodNet.Env)
	if err != nil {
		return fail(err)
	}
	if bundled {
		if err := j.checkPlugin(s, l); err != nil {
			return fail(err)
		}
	}
	j.net = s
	j.netReason = fmt.Sprintf("%s with the %s plugin, written by join", s.Mode(), s.Plugin())
	return nil
}

// checkPlugin refuses a network whose plugin the bundle does not carry and
// the CNI bin folder does not hold: Microsoft's nat.exe and sdnbridge.exe
// (windows-container-networking) cannot be built with the release and are
// the operator's to add.
func (j *Join) checkPlugin(s *podnet.Setup, l config.Layout) error {
	name := s.Plugin() + ".exe"
	for _, f := range runtimeinstall.Files {
		if f.Sub == "cni" && strings.EqualFold(f.Name, name) {
			return nil
		}
	}
	ok, err := hostfs.Exists(j.sys.FS, s.PluginFile())
	if err != nil || ok {
		return err
	}
	flag, value := cni.FlagMode, s.Mode()
	if s.Mode() == cni.ModeL2Bridge {
		flag, value = cni.FlagPlugin, s.Plugin()
	}
	return &cni.FlagError{Flag: flag, Value: value,
		Problem: fmt.Sprintf("needs %s (Microsoft's windows-container-networking), which the release does not bundle and %s does not hold", name, l.CNIBinDir),
		Fix: fmt.Sprintf("use %s %s (with %s, %s and %s), whose %s plugin the release carries, or put %s into %s and run join again",
			cni.FlagMode, cni.ModeL2Bridge, cni.FlagSubnet, cni.FlagClusterCIDR, cni.FlagServiceCIDR, cni.PluginWinBridge, name, l.CNIBinDir)}
}

// networkStep writes the pod network; its undo takes back what it wrote
// (and, for l2bridge, the HNS network and endpoint it created).
func (j *Join) networkStep() steps.Step {
	return steps.Step{
		Name:        stepNetwork,
		Description: j.net.Describe(),
		Do: func(_ context.Context, out io.Writer) error {
			if err := j.note(func(p *progress) { p.Network = true }); err != nil {
				return err
			}
			return j.net.Apply(out)
		},
		Undo: j.net.Undo,
	}
}
