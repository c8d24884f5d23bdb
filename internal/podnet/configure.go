package podnet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// Options are the inputs of cni-config, with the host's facts filled in
// (Complete).
type Options struct {
	// GOOS is the target OS: it decides how paths compare.
	GOOS string
	// Mode is --mode: cni.ModeNAT (the default) or cni.ModeL2Bridge.
	Mode string
	// Subnet, Gateway, DNS and DNSSearch are the flags of the same names;
	// Complete hands them, with the host's facts, to NAT and L2Bridge.
	Subnet, Gateway string
	DNS, DNSSearch  []string
	// NodeConfig is the joined node's configuration (--config), where
	// Complete finds the node's pod range for l2bridge without --subnet.
	NodeConfig string
	NAT        cni.Options
	L2Bridge   cni.L2BridgeOptions
	// Output is the CNI config file (-o); "-" prints it and changes
	// nothing. OutputGiven says -o was on the command line.
	Output      string
	OutputGiven bool
	// Force replaces an Output that holds something else.
	Force bool
	// DryRun prints what would be done and changes nothing.
	DryRun bool
	// CNIBinDir is where the plugin executables are (--cni-bin-dir).
	CNIBinDir string
	// ContainerdConfig is containerd's config.toml (--containerd-config);
	// "" leaves containerd's configuration alone.
	ContainerdConfig string
	// ContainerdDefaults are the CNI directories containerd uses when its
	// config.toml does not name them.
	ContainerdDefaults containerd.Dirs
	// StateFile records what was set up (StateFile).
	StateFile string
	// Facts are what Complete asks the host (SystemFacts outside tests).
	Facts HostFacts
	// SubnetFromNode says Complete took Subnet from the node's Node
	// object, which the command tells the operator (PodRangeNote).
	SubnetFromNode bool
	// WrittenBy is recorded with the network when another command than
	// cni-config writes it (join), so that its reset removes what it
	// wrote and nothing cni-config wrote since.
	WrittenBy string
}

// Env is the host as cni-config reaches it.
type Env struct {
	HNS               HNS
	FS                hostfs.FS
	ContainerdVersion ContainerdVersion
	Now               func() time.Time
	// Protect judges the CNI folders and creates the missing ones
	// restricted (runtimeinstall.CreateCNIFolders); a Windows run
	// without it is refused.
	Protect *protect.Host
}

// Configure writes the pod network: for l2bridge the HNS network and host
// endpoint first, then the CNI config, the record, and containerd's
// config.toml. Wrong input is refused before anything is changed; a step
// that fails undoes the ones before it.
func Configure(out io.Writer, o Options, env Env) error {
	s, err := Prepare(o, env)
	if err != nil {
		return err
	}
	r := s.r
	r.out = out
	if o.Output == "-" {
		_, err := out.Write(r.conf)
		return err
	}
	if o.DryRun {
		r.printDryRun()
		return nil
	}
	if err := r.apply(); err != nil {
		fmt.Fprintf(out, "cni-config failed: %v\n", steps.FirstLine(err, ""))
		if len(r.undo) > 0 {
			fmt.Fprintln(out, "Undoing what this run changed:")
			if uerr := r.undo.Run(out); uerr != nil {
				return fmt.Errorf("%w; and undoing it failed: %v", err, uerr)
			}
		}
		return err
	}
	r.printDone()
	return nil
}

// Setup is the pod network prepared for one host: its inputs checked
// against each other and against the files (an existing CNI config,
// containerd's config.toml, an earlier network), and nothing changed yet.
// cni-config runs it whole (Configure); join runs it as one step of its
// plan, with Apply as the step and Undo as its way back.
type Setup struct{ r *run }

// Prepare checks o, as Complete left it, against the host and plans the
// change; it changes nothing.
func Prepare(o Options, env Env) (*Setup, error) {
	r := &run{o: o, env: env, out: io.Discard}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	return &Setup{r: r}, nil
}

// Mode is the network's mode, cni.ModeNAT or cni.ModeL2Bridge.
func (s *Setup) Mode() string { return s.r.o.Mode }

// HostIP is the host's own address on the network (State.HostAddress).
func (s *Setup) HostIP() netip.Addr {
	a, _ := s.r.state.HostAddress()
	return a
}

// Plugin is the CNI plugin the configuration names, and PluginFile the
// executable containerd runs for it, in the CNI bin folder.
func (s *Setup) Plugin() string {
	if s.r.plan != nil {
		return s.r.plan.Plugin
	}
	return cni.ModeNAT
}

// PluginFile is the plugin's executable in the CNI bin folder.
func (s *Setup) PluginFile() string {
	return ospath.Join(s.r.o.GOOS, s.r.o.CNIBinDir, s.Plugin()+".exe")
}

// Describe says in one line what Apply does, for a plan.
func (s *Setup) Describe() string {
	r, o := s.r, s.r.o
	var parts []string
	if p := r.plan; p != nil {
		parts = append(parts, fmt.Sprintf("create or reuse the HNS network %q (L2Bridge, %s, gateway %s) on adapter %q and its host endpoint %q (%s), "+
			"which takes the host off the network for a few seconds", p.NetworkName, p.Subnet, p.Gateway, p.Adapter, p.EndpointName, p.EndpointIP))
	}
	if r.confChanged {
		parts = append(parts, fmt.Sprintf("write %s (%s network, plugin %s, subnet %s)", o.Output, o.Mode, s.Plugin(), o.Subnet))
	} else {
		parts = append(parts, fmt.Sprintf("keep %s: it already holds this configuration", o.Output))
	}
	if c := r.ctrd; c != nil && len(c.changes) > 0 {
		parts = append(parts, fmt.Sprintf("point %s at %s and %s (the original kept as a .bak copy)", c.path, r.want().ConfDir, r.want().BinDir))
	}
	parts = append(parts, "record it in "+o.StateFile)
	return strings.Join(parts, "; ")
}

// Apply makes the change, saying what it did on out. What it changed, a
// failure half-way included, is taken back by Undo.
func (s *Setup) Apply(out io.Writer) error {
	s.r.out = out
	if err := s.r.apply(); err != nil {
		return err
	}
	if s.r.confChanged {
		fmt.Fprintf(out, "wrote %s\n", s.r.o.Output)
	}
	if c := s.r.ctrd; c != nil {
		s.r.printContainerd(false)
		if len(c.changes) > 0 {
			fmt.Fprintln(out, "Restart containerd to load it: Restart-Service containerd")
		}
	}
	if s.r.plan != nil {
		fmt.Fprintln(out, strings.Join(s.r.plan.RouteHint(), "\n"))
	}
	return nil
}

// Undo takes back what Apply changed, newest first.
func (s *Setup) Undo(out io.Writer) error {
	u := s.r.undo
	s.r.undo = nil
	return u.Run(out)
}

type run struct {
	o   Options
	env Env
	out io.Writer

	conf []byte
	plan *cni.L2BridgePlan
	// oldConf is Output's content before, nil when there was none.
	oldConf     []byte
	confChanged bool
	ctrd        *containerdEdit
	// folders are the CNI folders containerd will use once the run is
	// done, and where it writes (cniFolders).
	folders []protect.Target
	prev    State
	prevRaw []byte
	state   State
	undo    steps.Undos
	backup  string
}

type containerdEdit struct {
	path          string
	missing       bool
	before, after []byte
	changes       []containerd.Change
	runtime       containerd.Runtime
}

func (r *run) prepare() error {
	o := r.o
	var err error
	if r.o.Mode, r.conf, r.plan, err = o.network(); err != nil {
		return err
	}
	if o.Output == "-" {
		return nil
	}

	old, err := r.env.FS.ReadFile(o.Output)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.confChanged = true
	case err != nil:
		return fmt.Errorf("read %s: %w", o.Output, err)
	default:
		r.oldConf, r.confChanged = old, !bytes.Equal(old, r.conf)
		if r.confChanged && !o.Force {
			return fmt.Errorf("%s already exists: pass --force to replace it", o.Output)
		}
	}

	if r.ctrd, err = r.planContainerd(); err != nil {
		return err
	}

	// The CNI folders are judged before anything changes, the dry run's
	// included: containerd runs what they hold as SYSTEM.
	r.folders = r.cniFolders()
	if len(r.folders) > 0 {
		if r.env.Protect == nil {
			return fmt.Errorf("judging the CNI folders %s: this host cannot read owners and ACLs", o.CNIBinDir)
		}
		if err := runtimeinstall.CheckCNIFolders(r.folders, *r.env.Protect); err != nil {
			return err
		}
	}

	prev, ok, err := ReadState(r.env.FS, o.StateFile)
	if err != nil {
		return err
	}
	if ok {
		r.prev = prev
		r.prevRaw, _ = r.env.FS.ReadFile(o.StateFile)
	}
	r.state = State{Mode: r.o.Mode, CNIConfFile: o.Output, CNIBinDir: o.CNIBinDir, WrittenBy: o.WrittenBy,
		// A network an earlier l2bridge run created stays recorded, so
		// that reset --network still finds it after a switch to nat.
		Network: prev.Network, Endpoint: prev.Endpoint,
		// So do the folders a run of the same writer created.
		Dirs: prev.dirsOf(o.WrittenBy)}
	if p := r.plan; p != nil {
		if n := prev.Network; n != nil && n.Created && n.Name != p.NetworkName {
			return &cni.FlagError{Flag: cni.FlagNetworkName, Value: p.NetworkName,
				Problem: fmt.Sprintf("differs from %q, the HNS network an earlier cni-config created (recorded in %s)", n.Name, o.StateFile),
				Fix:     fmt.Sprintf("use %s %s, or remove that network first (edgecore.exe reset --network)", cni.FlagNetworkName, n.Name)}
		}
		r.state.Plugin, r.state.Subnet, r.state.NodeIP = p.Plugin, p.Subnet.String(), p.NodeIP.String()
		r.state.HostIP = p.EndpointIP.String()
	} else if subnet, gw, err := cni.NATAddresses(r.conf); err == nil {
		r.state.Subnet, r.state.HostIP = subnet.String(), gw.String()
	}
	return nil
}

// planContainerd works out the edit of config.toml, so that a file it
// cannot edit is refused before anything else changes.
func (r *run) planContainerd() (*containerdEdit, error) {
	o := r.o
	if o.ContainerdConfig == "" {
		return nil, nil
	}
	c := &containerdEdit{path: o.ContainerdConfig}
	data, err := r.env.FS.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		c.missing = true
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read containerd's configuration %s: %w", c.path, err)
	}
	if r.env.ContainerdVersion != nil {
		// An unknown version only makes the edit take the keys every
		// release reads.
		if v, err := r.env.ContainerdVersion(); err == nil {
			c.runtime = v
		}
	}
	c.before = data
	c.after, c.changes, err = containerd.Edit(data, containerd.EditOptions{
		GOOS:    o.GOOS,
		Want:    r.want(),
		Default: o.ContainerdDefaults,
		Runtime: c.runtime,
	})
	var e *containerd.Error
	if errors.As(err, &e) {
		e.File = c.path
	}
	return c, err
}

// cniFolders are the CNI folders to judge, and to create where missing:
// the plugin folder (--cni-bin-dir) and the configuration folder (-o's)
// the run points containerd at, and the others containerd's config.toml
// still names once edited (2.1's bin_dirs keeps the operator's folders
// after ours), or containerd's defaults where it has no config.toml: every
// folder containerd will run a plugin from, or read a network in.
func (r *run) cniFolders() []protect.Target {
	want := r.want()
	bins, confs := []string{want.BinDir}, []string{want.ConfDir}
	if c := r.ctrd; c != nil {
		if c.missing {
			bins, confs = append(bins, r.o.ContainerdDefaults.BinDir), append(confs, r.o.ContainerdDefaults.ConfDir)
		} else if s, err := containerd.Read(c.after); err == nil {
			bins = append(bins, s.BinDirs...)
			confs = append(confs, s.ConfDir)
		}
	}
	return runtimeinstall.CNITargets(r.o.GOOS, bins, confs...)
}

func (r *run) want() containerd.Dirs {
	return containerd.Dirs{BinDir: r.o.CNIBinDir, ConfDir: ospath.Dir(r.o.GOOS, r.o.Output)}
}

func (r *run) apply() error {
	fsys, o := r.env.FS, r.o
	if len(r.folders) > 0 {
		// The folders the run points containerd at are created before
		// anything is written into them, open to SYSTEM and
		// Administrators only from their first moment; then all are
		// judged again: one someone else made since Prepare is refused.
		// containerd's defaults, judged where it has no config.toml,
		// are not made: nothing points it at them.
		want := r.want()
		made, err := runtimeinstall.CreateCNIFolders(o.GOOS, runtimeinstall.CNITargets(o.GOOS, []string{want.BinDir}, want.ConfDir), *r.env.Protect)
		if err == nil {
			err = runtimeinstall.CheckCNIFolders(r.folders, *r.env.Protect)
		}
		for _, d := range made {
			fmt.Fprintf(r.out, "created %s\n", d)
		}
		if len(made) > 0 {
			r.state.Dirs = append(r.state.Dirs, made...)
			r.undo.Push("remove the folders created", func() error { return removeDirs(io.Discard, fsys, made) })
		}
		if err != nil {
			return err
		}
	}
	if r.plan != nil {
		if err := ensureL2Bridge(r.out, r.env.HNS, *r.plan, r.prev, &r.state, &r.undo); err != nil {
			return err
		}
	}
	if r.confChanged {
		if err := writeFile(fsys, o.GOOS, o.Output, r.conf); err != nil {
			return fmt.Errorf("write %s: %w", o.Output, err)
		}
		r.undo.Push("restore "+o.Output, restore(fsys, o.GOOS, o.Output, r.oldConf))
	}
	if st := r.state.encode(); !bytes.Equal(st, r.prevRaw) {
		if err := writeFile(fsys, o.GOOS, o.StateFile, st); err != nil {
			return fmt.Errorf("record the network in %s: %w", o.StateFile, err)
		}
		r.undo.Push("restore "+o.StateFile, restore(fsys, o.GOOS, o.StateFile, r.prevRaw))
	}
	if c := r.ctrd; c != nil && len(c.changes) > 0 {
		r.backup = c.path + "." + r.env.Now().Format("20060102-150405") + ".bak"
		if err := writeFile(fsys, o.GOOS, r.backup, c.before); err != nil {
			return fmt.Errorf("save a copy of %s: %w", c.path, err)
		}
		backup := r.backup
		r.undo.Push("remove "+backup, func() error { return fsys.Remove(backup) })
		if err := writeFile(fsys, o.GOOS, c.path, c.after); err != nil {
			return fmt.Errorf("write %s: %w", c.path, err)
		}
		r.undo.Push("restore "+c.path, restore(fsys, o.GOOS, c.path, c.before))
	}
	return nil
}

// restore puts back what path held, or removes it when it held nothing.
func restore(fsys hostfs.FS, goos, path string, old []byte) func() error {
	return func() error {
		if old == nil {
			return fsys.Remove(path)
		}
		return writeFile(fsys, goos, path, old)
	}
}

func (r *run) printDryRun() {
	out, o := r.out, r.o
	fmt.Fprintln(out, "Dry run: cni-config would do the following; nothing is changed.")
	if p := r.plan; p != nil {
		fmt.Fprintf(out, "- create or reuse the HNS network %q (%s, %s, gateway %s) on adapter %q\n",
			p.NetworkName, "L2Bridge", p.Subnet, p.Gateway, p.Adapter)
		fmt.Fprintf(out, "- create or reuse its host endpoint %q (%s), attach it to the host, and turn forwarding on for it and for %s\n",
			p.EndpointName, p.EndpointIP, p.NodeIP)
	}
	if r.confChanged {
		fmt.Fprintf(out, "- write %s:\n%s", o.Output, r.conf)
	} else {
		fmt.Fprintf(out, "- keep %s: it already holds this configuration\n", o.Output)
	}
	r.printContainerd(true)
	fmt.Fprintf(out, "- record the pod network in %s\n", o.StateFile)
	if r.plan != nil {
		fmt.Fprintln(out, strings.Join(r.plan.RouteHint(), "\n"))
	}
}

func (r *run) printContainerd(dry bool) {
	out, c := r.out, r.ctrd
	item := "" // the dry run lists its steps
	if dry {
		item = "- "
	}
	want := r.want()
	switch {
	case c == nil:
		fmt.Fprintf(out, "%scontainerd's config.toml is left alone (--containerd-config \"\")\n", item)
	case c.missing:
		def := r.o.ContainerdDefaults
		fmt.Fprintf(out, "%scontainerd has no %s, so it reads CNI configs from %s and plugins from %s\n", item, c.path, def.ConfDir, def.BinDir)
		if !ospath.Same(r.o.GOOS, want.ConfDir, def.ConfDir) || !ospath.Same(r.o.GOOS, want.BinDir, def.BinDir) {
			fmt.Fprintf(out, "warning: containerd will not read %s or the plugins in %s: write its configuration first "+
				"(containerd.exe config default | Out-File '%s' -Encoding ascii) and run cni-config again\n", want.ConfDir, want.BinDir, c.path)
		}
	case len(c.changes) == 0:
		fmt.Fprintf(out, "%s%s already points containerd at %s and %s\n", item, c.path, want.ConfDir, want.BinDir)
	case dry:
		fmt.Fprintf(out, "- edit %s (containerd %s; the original is kept as a .bak copy):\n%s", c.path, c.runtime, containerd.Diff(c.path, c.before, c.after))
	default:
		fmt.Fprintf(out, "Edited %s (the original is kept as %s):\n", c.path, r.backup)
		for _, ch := range c.changes {
			fmt.Fprintf(out, "  %s\n", ch)
		}
	}
}

func (r *run) printDone() {
	out, o := r.out, r.o
	if r.confChanged {
		fmt.Fprintf(out, "Wrote %s.\n", o.Output)
	} else {
		fmt.Fprintf(out, "%s already holds this configuration.\n", o.Output)
	}
	r.printContainerd(false)
	if r.plan != nil {
		fmt.Fprintln(out, strings.Join(r.plan.RouteHint(), "\n"))
	}
	if r.confChanged || r.ctrd != nil && len(r.ctrd.changes) > 0 {
		fmt.Fprintln(out, "Restart containerd to load it: Restart-Service containerd")
	}
}
