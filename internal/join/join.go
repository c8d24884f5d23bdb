// Package join carries out `edgecore.exe join` and `edgecore.exe reset`.
// Both are plans (package steps): ordered steps, each of which says in one
// line what it does, makes its change, and knows how to take that change
// back; a failed step undoes the ones done in reverse, and the error names
// the step and the fix. Every effect on the host goes through the System
// the caller passes, so the whole of join and reset, rollback included, is
// tested with fakes on any build host.
package join

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/registries"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Options are the inputs of `edgecore.exe join`.
type Options struct {
	// JoinOptions are keadm join's flags: cloudcore address, token, node
	// name, certificate port, labels, runtime endpoint, hub protocol.
	config.JoinOptions
	// Set are the --set path=value overrides of the generated
	// configuration.
	Set []string
	// ConfigFile is where the configuration is written (--config); the
	// service runs with it.
	ConfigFile string
	// Executable is the absolute path of the edgecore.exe the service
	// runs.
	Executable string
	// LogFile is where the service logs; join reads it to see the hub
	// connect or the token being refused.
	LogFile string
	// Timeout bounds the wait for the certificates and the hub connection.
	Timeout time.Duration
	// Host is the machine joining, including the node IP.
	Host config.Host
	// Layout is the node's directories and files on Host (deps.Layout).
	Layout config.Layout
	// ServiceName defaults to service.DefaultName.
	ServiceName string
	// DryRun prints the plan and changes nothing.
	DryRun bool
	// Runtime is --runtime: whether the container runtime the release
	// bundles is installed (runtimeinstall.ChoiceAuto when empty).
	Runtime string
	// Network is the pod network (cni-config's --mode, --subnet, ...):
	// written with the bundled runtime (l2bridge with win-bridge unless
	// --mode says otherwise), with the host's runtime only when --mode is
	// given. Join completes it once the runtime is decided.
	Network podnet.Options
	// RegistryConfig is --registry-config: a registries.yaml (RKE2's
	// mirrors/configs format) written as the bundled containerd's
	// hosts.toml files and credentials; "" for none.
	RegistryConfig string
	// Proxy is --proxy and --no-proxy: the services' proxy environment.
	Proxy ProxyOptions
}

// Flag names that errors point at.
const (
	flagConfig  = "--config"
	flagTimeout = "--timeout"
)

// The steps of a join, in order. Access is restricted before the
// configuration is written: the file holds the join token, and a file
// created in a restricted directory is restricted from its first byte.
// The second, the Administrator check, is steps.Elevated, as in reset and
// takeover.
const (
	stepValidate  = "validate inputs"
	stepEarlier   = "check for an earlier installation"
	stepDirs      = "create directories"
	stepACL       = "restrict access"
	stepConfig    = "write the configuration"
	stepService   = "install and start the service"
	stepWait      = "wait for certificates and the hub connection"
	numJoinSteps  = 9
	fixResetFirst = "remove the earlier installation with `edgecore.exe reset` (add --keep-data to keep the database), " +
		"or remove only the service with `edgecore.exe service uninstall`; then run join again. " +
		"A node that upstream's keadm joined is taken over instead, keeping its name, certificates, database and pods: " +
		"`edgecore.exe takeover --dry-run`, then `edgecore.exe takeover`"
)

// kubeEdgeDir holds the configuration, the node's key and certificates.
// Join restricts it to SYSTEM and Administrators.
func (j *Join) kubeEdgeDir() string { return j.o.Layout.KubeEdgeDir }

// Join is a join whose inputs have been checked, ready to print or run.
type Join struct {
	o        Options
	sys      System
	goos     string
	cfg      *v1alpha2.EdgeCoreConfig
	data     []byte
	rewrites []config.Rewrite
	svc      service.Config
	hubAddr  string
	certAddr string
	// tunnelAddr is cloudStream's tunnel port; empty with --stream=false.
	tunnelAddr string
	// protected are the paths of protect's description for this node.
	protected []protect.Target
	// hubTCP is false for a QUIC hub: it answers on UDP only, so a TCP
	// reach check would refuse every QUIC cloud; the hub wait proves it.
	hubTCP bool

	// What the steps did, for their undo.
	created     []string
	wroteConfig bool
	installed   bool
	newFiles    []string
	logOffset   int64
	// rt installs the bundled container runtime, or says why not.
	rt *runtimeinstall.Installer
	// net writes the pod network, nil when the host's is kept;
	// netReason says which.
	net       *podnet.Setup
	netReason string
	// servicesReason says whether Services at the node are on, and why.
	servicesReason string
	// panicBefore is the panic log as it was before the service started
	// (nil if there was none), so that only what this attempt wrote to it
	// is read.
	panicBefore fs.FileInfo
}

// Run checks the inputs and joins the node, printing each step to out; with
// o.DryRun it prints the plan instead and changes nothing.
func Run(ctx context.Context, out io.Writer, o Options, sys System) error {
	j, err := New(o, sys)
	if err != nil {
		return err
	}
	if err := j.decideRuntime(ctx); err != nil {
		return err
	}
	if err := j.decideNetwork(); err != nil {
		return err
	}
	if err := j.decideServices(); err != nil {
		return err
	}
	p := j.Plan()
	if o.DryRun {
		fmt.Fprintf(out, "Dry run: %s join would do the following; nothing is changed.\n", config.ExecutableName(j.goos))
		fmt.Fprintf(out, "Container runtime: %s.\n", j.rt.Reason())
		fmt.Fprintf(out, "Pod network: %s.\n", j.netReason)
		j.printProxy(out)
		fmt.Fprintf(out, "Services at the node: %s.\n", j.servicesReason)
		p.Print(out)
		return nil
	}
	fmt.Fprintf(out, "Joining node %s to cloudcore at %s\n", j.NodeName(), j.hubAddr)
	fmt.Fprintf(out, "Container runtime: %s.\n", j.rt.Reason())
	fmt.Fprintf(out, "Pod network: %s.\n", j.netReason)
	j.printProxy(out)
	fmt.Fprintf(out, "Services at the node: %s.\n", j.servicesReason)
	if err := p.Run(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "Node %s joined cloudcore at %s.\n", j.NodeName(), j.hubAddr)
	fmt.Fprintf(out, "edgecore runs as the Windows service %q: it starts at boot and is restarted after a failure; it logs to %s.\n",
		j.svc.Name, j.o.LogFile)
	if ns := config.NodeShutdownOf(j.cfg, j.goos); ns.Grace > 0 {
		fmt.Fprintf(out, "At a host shutdown the node first stops its pods by priority, within %v (%s).\n", ns.Grace, ns.Field)
	}
	fmt.Fprintf(out, "Next, on the cloud side: kubectl get node %s\n", j.NodeName())
	return nil
}

// New checks every input without touching the host (Options.Validate,
// then the configuration with the --set values) and builds the
// configuration. Problems are reported together, each naming its flag and
// the fix, as a failure of the first step.
func New(o Options, sys System) (*Join, error) {
	if o.ServiceName == "" {
		o.ServiceName = service.DefaultName
	}
	if o.Runtime == "" {
		o.Runtime = runtimeinstall.ChoiceAuto
	}
	c, rewrites, err := o.generate()
	if err == nil {
		j := &Join{o: o, sys: sys, goos: o.Host.GOOS}
		if err = j.prepare(c, rewrites); err == nil {
			return j, nil
		}
	}
	return nil, validateStepError(err)
}

// NodeName is the name the node registers with.
func (j *Join) NodeName() string { return j.cfg.Modules.Edged.HostnameOverride }

// prepare completes the configuration c that keadm's flags made (with
// its rewrites) from options Validate accepted, and checks it with the
// --set values applied.
func (j *Join) prepare(c *v1alpha2.EdgeCoreConfig, rewrites []config.Rewrite) error {
	// Written, and passed to the service, in canonical form, as `service
	// install` does (filepath.Abs): C:/etc/kubeedge/x and
	// C:\etc\kubeedge\x are the same file, named one way throughout.
	j.o.ConfigFile = ospath.Clean(j.goos, j.o.ConfigFile)
	o := j.o
	kubeedge := j.kubeEdgeDir()
	settings, _ := config.ParseSettings(o.Set)
	var err error
	if c, err = config.ApplySettings(c, settings, o.Host); err != nil {
		return err
	}
	rewrites = append(rewrites, config.Normalize(c, j.goos)...)
	if errs := config.Validate(c, j.goos); len(errs) > 0 {
		return &config.InvalidError{What: "configuration with the --set values", Errs: errs}
	}
	// The executable comes from the running process, not a flag; the
	// service manager still needs it absolute and quotable. A host
	// shutdown waits for the pods' grace periods the configuration (with
	// the --set values) gives.
	j.svc = service.DefaultConfig(o.Executable, o.ConfigFile, config.NodeShutdownOf(c, j.goos).Grace)
	j.svc.Name = o.ServiceName
	if err := j.svc.Validate(); err != nil {
		return err
	}
	var errs field.ErrorList
	hub := c.Modules.EdgeHub
	for _, f := range []struct{ name, path string }{
		{"modules.edgeHub.tlsCaFile", hub.TLSCAFile},
		{"modules.edgeHub.tlsCertFile", hub.TLSCertFile},
		{"modules.edgeHub.tlsPrivateKeyFile", hub.TLSPrivateKeyFile},
	} {
		if !ospath.Within(j.goos, kubeedge, f.path) {
			errs = append(errs, field.Invalid(field.NewPath(config.FlagSet+" "+f.name), f.path,
				"keep the node's key and certificates under "+kubeedge+", which join restricts to SYSTEM and Administrators"))
		}
	}
	if len(errs) > 0 {
		return &config.InvalidError{What: "configuration with the --set values", Errs: errs}
	}
	// With the executable: the service must not run a binary others
	// may replace.
	l := o.Layout
	l.LogDir = ospath.Dir(j.goos, o.LogFile)
	files := protect.ConfigFiles(o.ConfigFile, upgrade.SettingsPath(j.goos, o.ConfigFile))
	if j.protected, err = protect.Targets(c, l, o.Executable, files...); err != nil {
		return err
	}
	cloud, err := config.CloudEndpoints(c)
	if err != nil {
		return err
	}
	j.hubAddr, j.certAddr = cloud.Hub.Address, cloud.Certificates.Address
	j.hubTCP = cloud.Hub.Transport == config.TransportTCP
	if cloud.Tunnel != nil {
		j.tunnelAddr = cloud.Tunnel.Address
	}
	j.cfg, j.rewrites = c, rewrites
	j.svc.Environment = j.proxyEnvironment()
	j.data, err = config.JoinFile(c, j.hubAddr, "`"+config.ExecutableName(j.goos)+" join`")
	return err
}

// directories are those the node needs: the ones the configuration names,
// the configuration's own, the log's, the protected kubeedge directory and
// every other restricted directory of protect's description (the kubelet's
// device plugins, when its root is elsewhere).
func (j *Join) directories() []string {
	var dirs []string
	add := func(d string) { dirs = ospath.AppendNew(j.goos, dirs, d) }
	add(j.kubeEdgeDir())
	add(ospath.Dir(j.goos, j.o.ConfigFile))
	for _, d := range config.Directories(j.cfg, j.goos) {
		add(d.Path)
	}
	add(ospath.Dir(j.goos, j.o.LogFile))
	for _, t := range j.protected {
		if t.Restrict && !t.File {
			add(t.Path)
		}
	}
	return dirs
}

// Plan is the join as steps.
func (j *Join) Plan() steps.Plan {
	hub := j.cfg.Modules.EdgeHub
	cmdline, _ := j.svc.CommandLine() // checked in New
	list := []steps.Step{
		{
			Name: stepValidate,
			Description: fmt.Sprintf("node %s; check that cloudcore answers at %s (hub) and %s (certificates)%s",
				j.NodeName(), j.hubAddr, j.certAddr, j.tunnelStep()),
			Do: j.validate,
		},
		steps.Elevated("join", j.sys.Elevated),
		{
			Name: stepEarlier,
			Description: fmt.Sprintf("refuse if the service %q, %s or the node certificates %s, %s already exist, "+
				"or if another account than SYSTEM and Administrators owns a directory of the node, owns or may rename a parent of one, or may change %s",
				j.svc.Name, j.o.ConfigFile, hub.TLSCertFile, hub.TLSPrivateKeyFile, j.o.Executable),
			Do: j.checkEarlier,
		},
		{
			Name: stepDirs,
			Description: "create those missing of " + strings.Join(j.directories(), ", ") +
				", each protected from its creation: the node's own open to SYSTEM and Administrators only, a new parent such as C:\\etc changed by them only",
			Do:   j.createDirs,
			Undo: j.removeDirs,
		},
		{
			Name:        stepACL,
			Description: fmt.Sprintf("allow only SYSTEM and Administrators into %s and everything in them, before any secret is written", strings.Join(protect.Restricted(j.protected), " and ")),
			Do:          j.restrict,
			// No undo: the directories hold only kubeedge's files, so a
			// tighter ACL is harmless, and if join created them, undoing
			// "create directories" removes them.
		},
		{
			Name:        stepConfig,
			Description: fmt.Sprintf("write %s for node %s, with the join token until the certificates are issued, and load it back", j.o.ConfigFile, j.NodeName()),
			Do:          j.writeConfig,
			Undo:        j.removeConfig,
		},
	}
	// The runtime first, so that edgecore's service depends on
	// containerd's and finds its CRI answering.
	// The pod network between the runtime's service and its start: the
	// started containerd finds its CNI configuration at once. With the
	// host's runtime it comes after the configuration.
	var rt []steps.Step
	if j.rt != nil {
		rt = j.rt.Steps()
	}
	for len(rt) > 0 && rt[0].Name != runtimeinstall.StepStart {
		list = append(list, rt[0])
		rt = rt[1:]
	}
	if j.net != nil {
		list = append(list, j.networkStep())
	}
	list = append(list, rt...)
	list = append(list, []steps.Step{
		// The images next, into the runtime that now answers, before the
		// service starts the node.
		j.imagesStep(),
		{
			Name: stepService,
			Description: fmt.Sprintf("install the service %q (automatic start, restarted after a failure, a host shutdown waits up to %v for it) running %s%s, and start it",
				j.svc.Name, j.svc.PreShutdownTimeout, cmdline, proxyLine(j.svc.Environment)),
			Do:   j.installService,
			Undo: j.uninstallService,
		},
		{
			Name: stepWait,
			Description: fmt.Sprintf("wait up to %v for %s and %s, the token removed from %s, and the hub connection in %s",
				j.o.Timeout, hub.TLSCertFile, hub.TLSPrivateKeyFile, j.o.ConfigFile, j.o.LogFile),
			Do: j.wait,
		},
	}...)
	return steps.Plan{Verb: "join", Steps: list}
}

// decideRuntime works out, reading the host only, whether join installs
// the container runtime the release bundles beside edgecore.exe (package
// runtimeinstall); a refusal is reported as the failure of join's first
// step.
func (j *Join) decideRuntime(ctx context.Context) error {
	l := j.o.Layout
	regs, err := j.readRegistries()
	if err != nil {
		return &steps.StepError{Verb: "join", Index: 1, Total: numJoinSteps, Step: stepValidate, Err: err, Fix: steps.Fix(err)}
	}
	rt, err := runtimeinstall.Decide(ctx, runtimeinstall.Options{
		Registries:   regs,
		Environment:  j.svc.Environment,
		Layout:       l,
		ReleaseDir:   ospath.Dir(j.goos, j.o.Executable),
		Choice:       j.o.Runtime,
		Endpoint:     j.cfg.Modules.Edged.TailoredKubeletConfig.ContainerRuntimeEndpoint,
		SandboxImage: j.cfg.Modules.Edged.PodSandboxImage,
		Timeout:      runtimeinstall.DefaultCRITimeout,
		Versions:     runtimeinstall.BundleVersions(j.sys.Runtime, j.goos, ospath.Dir(j.goos, j.o.Executable)),
	}, j.sys.Runtime)
	if err == nil && regs != nil && !rt.Installs() {
		err = steps.WithFix(fmt.Errorf("%s configures the containerd join installs, but %s", registries.Flag, rt.Reason()),
			"configure the host's containerd yourself (hosts.toml files under its config.toml's registry config_path), "+
				"or let join install the bundled runtime ("+runtimeinstall.FlagRuntime+" "+runtimeinstall.ChoiceBundled+" on a host without containerd)")
	}
	if err != nil {
		return &steps.StepError{Verb: "join", Index: 1, Total: numJoinSteps, Step: stepValidate, Err: err, Fix: steps.Fix(err)}
	}
	j.rt = rt
	return nil
}

// readRegistries reads and checks --registry-config, nil without one.
func (j *Join) readRegistries() (*registries.File, error) {
	if j.o.RegistryConfig == "" {
		return nil, nil
	}
	data, err := j.sys.FS.ReadFile(j.o.RegistryConfig)
	if err != nil {
		return nil, steps.WithFix(fmt.Errorf("%s %s: %w", registries.Flag, j.o.RegistryConfig, err), "give the path of a registries.yaml")
	}
	f, err := registries.Parse(data, j.goos)
	if err != nil {
		return nil, steps.WithFix(fmt.Errorf("%s %s: %w", registries.Flag, j.o.RegistryConfig, err),
			"correct the keys named above (RKE2's registries.yaml format: mirrors with endpoint and rewrite, configs with auth and tls)")
	}
	return f, nil
}

func (j *Join) validate(_ context.Context, out io.Writer) error {
	fmt.Fprintf(out, "token, address, node name %s, labels and --set values are valid\n", j.NodeName())
	for _, r := range j.rewrites {
		fmt.Fprintf(out, "%s: written as %s (given as %s)\n", r.Field, r.To, r.From)
	}
	var errs []error
	checks := []struct{ what, addr string }{{"certificate", j.certAddr}}
	if j.hubTCP {
		checks = append([]struct{ what, addr string }{{"hub", j.hubAddr}}, checks...)
	}
	for _, a := range checks {
		if err := j.sys.Reach(a.addr); err != nil {
			errs = append(errs, fmt.Errorf("cloudcore does not answer on its %s port %s: %v", a.what, a.addr, err))
		}
	}
	if len(errs) > 0 {
		return steps.WithFix(errors.Join(errs...),
			"check that cloudcore runs (`kubectl -n kubeedge get pods` on the cloud side), that --cloudcore-ipport and --certport name its address and ports, "+
				"and that the ports are open in the firewalls of both hosts")
	}
	// Checked after the hub: a cloudcore that is down altogether is one
	// problem with one fix, while a missing tunnel alone means the cloud
	// runs without cloudStream.
	if j.tunnelAddr != "" {
		if err := j.sys.Reach(j.tunnelAddr); err != nil {
			return steps.WithFix(fmt.Errorf("cloudcore does not answer on its stream tunnel port %s (kubectl logs, exec and metrics go through it): %v", j.tunnelAddr, err),
				config.TunnelFix)
		}
		fmt.Fprintf(out, "cloudcore's stream tunnel answers at %s\n", j.tunnelAddr)
	}
	if !j.hubTCP {
		fmt.Fprintf(out, "cloudcore answers at %s; its QUIC hub %s (UDP) is checked when the node connects\n", j.certAddr, j.hubAddr)
		return nil
	}
	fmt.Fprintf(out, "cloudcore answers at %s and %s\n", j.hubAddr, j.certAddr)
	return nil
}

// tunnelStep names the tunnel check in the plan when edgeStream is on.
func (j *Join) tunnelStep() string {
	if j.tunnelAddr == "" {
		return ""
	}
	return fmt.Sprintf(" and %s (stream tunnel, for kubectl logs, exec and metrics)", j.tunnelAddr)
}

func (j *Join) checkEarlier(_ context.Context, out io.Writer) error {
	var found []error
	installed, err := j.sys.Services.Installed(j.svc.Name)
	if err != nil {
		return err
	}
	if installed {
		found = append(found, fmt.Errorf("the service %q is %w", j.svc.Name, service.ErrAlreadyInstalled))
	}
	hub := j.cfg.Modules.EdgeHub
	for _, f := range []struct{ what, path string }{
		{"the configuration", j.o.ConfigFile},
		{"the CA certificate of an earlier join", hub.TLSCAFile},
		{"the node certificate of an earlier join", hub.TLSCertFile},
		{"the node key of an earlier join", hub.TLSPrivateKeyFile},
	} {
		ok, err := hostfs.Exists(j.sys.FS, f.path)
		if err != nil {
			return err
		}
		if ok {
			found = append(found, fmt.Errorf("%s exists: %s", f.what, f.path))
		}
	}
	if len(found) > 0 {
		return steps.WithFix(errors.Join(found...), fixResetFirst)
	}
	fmt.Fprintln(out, "none found")
	// Before the token is written: a directory, or a parent, that another
	// account owns or may rename would let it read the token or replace
	// the node's files; each refusal names its own fix.
	return protect.Check(j.protected, j.sys.Protect, protect.Adopting)
}

// createDirs makes the missing directories, each with protect's
// descriptor from its first moment (protect.Create): a parent made with
// C:\'s ACL would be open to Authenticated Users on client editions, and
// refused by the next step.
func (j *Join) createDirs(_ context.Context, out io.Writer) error {
	for _, d := range j.directories() {
		made, err := protect.Create(j.goos, j.protected, d, j.sys.Protect)
		for _, m := range made {
			j.created = append(j.created, m)
			fmt.Fprintf(out, "created %s\n", m)
		}
		if err != nil {
			return steps.WithFix(err, "make sure no file has that name and the drive is writable, then run join again")
		}
	}
	if len(j.created) == 0 {
		fmt.Fprintln(out, "all exist")
	}
	return nil
}

// removeDirs removes the directories join created, with what the service
// put in them. The log directory stays while it holds edgecore's log of
// this attempt, which explains the failure; `edgecore.exe reset` removes
// it.
func (j *Join) removeDirs(out io.Writer) error {
	logDir := ospath.Dir(j.goos, j.o.LogFile)
	var errs []error
	for i := len(j.created) - 1; i >= 0; i-- {
		d := j.created[i]
		if ospath.Within(j.goos, d, logDir) {
			removed, err := hostfs.RemoveIfEmpty(j.sys.FS, d)
			switch {
			case err != nil:
				errs = append(errs, err)
			case removed:
				fmt.Fprintf(out, "removed %s\n", d)
			case ospath.Same(j.goos, d, logDir):
				fmt.Fprintf(out, "kept %s: it holds edgecore's log of this attempt\n", d)
			}
			continue
		}
		if err := hostfs.RemoveTree(j.sys.FS, j.goos, d); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "removed %s\n", d)
	}
	j.created = nil
	return errors.Join(errs...)
}

func (j *Join) writeConfig(_ context.Context, out io.Writer) error {
	if err := j.sys.WriteConfig(j.o.ConfigFile, j.data); err != nil {
		return err
	}
	j.wroteConfig = true
	fmt.Fprintf(out, "wrote %s\n", j.o.ConfigFile)
	if _, err := j.sys.LoadConfig(j.o.ConfigFile); err != nil {
		return steps.WithFix(err, "correct the --set value of the field named above, or leave it out to keep the default")
	}
	fmt.Fprintln(out, "it loads as edgecore will read it")
	return nil
}

func (j *Join) removeConfig(out io.Writer) error {
	if !j.wroteConfig {
		return nil
	}
	removed, err := hostfs.RemoveFile(j.sys.FS, j.o.ConfigFile)
	if err != nil {
		return err
	}
	j.wroteConfig = false
	if removed {
		fmt.Fprintf(out, "removed %s\n", j.o.ConfigFile)
	}
	return nil
}

func (j *Join) restrict(_ context.Context, out io.Writer) error {
	// Every one, drifted or not: join created most of them.
	return protect.EnforceAll(j.protected, j.sys.Protect, out)
}

// serviceFiles are the files the service creates while it joins: the
// certificates, the database and the log.
func (j *Join) serviceFiles() []string {
	hub := j.cfg.Modules.EdgeHub
	db := j.cfg.DataBase.DataSource
	return []string{hub.TLSCAFile, hub.TLSCertFile, hub.TLSPrivateKeyFile, db, db + "-journal", db + "-wal", db + "-shm"}
}

func (j *Join) installService(_ context.Context, out io.Writer) error {
	// Files that exist now (a database kept by `reset --keep-data`) are
	// the operator's; only those the service creates are undone.
	for _, f := range j.serviceFiles() {
		ok, err := hostfs.Exists(j.sys.FS, f)
		if err != nil {
			return err
		}
		if !ok {
			j.newFiles = append(j.newFiles, f)
		}
	}
	// Only what edgecore logs from now on tells about this attempt.
	if info, err := j.sys.FS.Lstat(j.o.LogFile); err == nil {
		j.logOffset = info.Size()
	}
	if info, err := j.sys.FS.Lstat(j.panicLog()); err == nil {
		j.panicBefore = info
	}
	warnings, err := j.sys.Services.Install(j.svc)
	switch {
	case errors.Is(err, service.ErrAlreadyInstalled):
		return steps.WithFix(err, fixResetFirst)
	case errors.Is(err, service.ErrAccessDenied):
		return steps.WithFix(err, steps.FixElevated)
	case err != nil:
		return err
	}
	j.installed = true
	cmdline, _ := j.svc.CommandLine()
	fmt.Fprintf(out, "installed service %q: %s\n", j.svc.Name, cmdline)
	for _, w := range warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	if err := j.sys.Services.Start(j.svc.Name); err != nil {
		// edgecore can fail within milliseconds, a refused token for one;
		// its log then names the real cause better than the start does.
		if cause := j.logCause(); cause != nil {
			return cause
		}
		return steps.WithFix(err, "the service stopped while starting: read "+j.o.LogFile+
			", or run `"+config.ExecutableName(j.goos)+" --config "+j.o.ConfigFile+"` in a console to see the error")
	}
	fmt.Fprintln(out, "started")
	return nil
}

func (j *Join) uninstallService(out io.Writer) error {
	var errs []error
	if j.installed {
		err := j.sys.Services.Uninstall(j.svc.Name)
		switch {
		case err == nil:
			fmt.Fprintf(out, "stopped and removed service %q\n", j.svc.Name)
			j.installed = false
		case errors.Is(err, service.ErrNotInstalled):
			j.installed = false
		default:
			// The service may still hold its files open; leave them
			// for reset rather than fail on each.
			return err
		}
	}
	for _, f := range j.newFiles {
		removed, err := hostfs.RemoveFile(j.sys.FS, f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if removed {
			fmt.Fprintf(out, "removed %s\n", f)
		}
	}
	return errors.Join(errs...)
}
