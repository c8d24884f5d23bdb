package runtimeinstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/registries"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// ServiceName is the containerd service's name, as `containerd.exe
// --register-service` names it and edgecore's service depends on it.
const ServiceName = service.DefaultRuntimeService

// DefaultCRITimeout bounds the wait for a started containerd's CRI: it
// answers within a second on a healthy host, and loads its plugins first.
const DefaultCRITimeout = time.Minute

// preShutdown is how long a host shutdown waits for containerd, as
// `containerd.exe --register-service` sets it.
const preShutdown = 180 * time.Second

// Options are what an installation needs to know.
type Options struct {
	Layout config.Layout
	// ReleaseDir is the folder of the running edgecore.exe, which holds
	// BundleDir.
	ReleaseDir string
	// Choice is --runtime: ChoiceAuto, ChoiceBundled or ChoiceHost.
	Choice string
	// Endpoint is the node's CRI endpoint, asked for Version once
	// containerd runs.
	Endpoint string
	// SandboxImage is the node's pause image, pinned in config.toml.
	SandboxImage string
	// Timeout bounds the wait for the CRI.
	Timeout time.Duration
	// Versions are the bundle's versions from the release manifest, for
	// the output; nil when it gives none.
	Versions map[string]string
	// Registries is join's --registry-config, nil without one: written
	// as hosts.toml files under RegistryDir and config.toml's credentials.
	Registries *registries.File
	// Environment is the containerd service's environment (join's
	// --proxy), nil for none.
	Environment []string
}

// Host is every effect on, and fact of, the host.
type Host struct {
	// Exists reports whether anything is at path.
	Exists func(path string) (bool, error)
	// Protect creates containerd's folder restricted from its first
	// moment (protect.Create with it as a restricted target).
	Protect protect.Host
	// CopyNew copies src to dst, a file that must not exist yet.
	CopyNew func(src, dst string) error
	// WriteNew writes a new file; it refuses to replace one.
	WriteNew func(path string, data []byte) error
	// Remove removes a file or an empty directory.
	Remove   func(path string) error
	ReadFile func(path string) ([]byte, error)
	// Services is the service manager (deps.WindowsServices outside
	// tests).
	Services deps.Services
	// CRI asks the runtime at an endpoint for Version and Status.
	CRI func(ctx context.Context, endpoint string) (hostprobe.CRIStatus, error)
	// Clock paces the CRI polls.
	Clock clock.Clock
}

// Record is what an installation made, kept in RecordFile as JSON.
type Record struct {
	// Service is the service registered, "" when none was.
	Service string `json:"service,omitempty"`
	// Files are the files written, in order.
	Files []string `json:"files"`
	// Dirs are the folders created, parents first.
	Dirs []string `json:"dirs"`
	// Versions are the bundle's versions installed.
	Versions map[string]string `json:"versions,omitempty"`
}

// Installer is an installation decided for one host.
type Installer struct {
	o    Options
	h    Host
	goos string
	// reason says why the bundled runtime is or is not installed.
	reason string
	// install is false when the host keeps its own runtime.
	install bool
	rec     Record
	// registered is true once the service is installed, until it is removed.
	registered bool
}

// Decide works out, reading the host only, whether to install the bundled
// runtime: with ChoiceHost never; with ChoiceAuto when the release has a
// bundle and the host has neither a containerd service nor a runtime
// answering at the endpoint; with ChoiceBundled always, refusing a host
// with a containerd service or a release without a bundle. Files of an
// earlier installation in the way are refused with the fix either way, and
// so is, whatever the choice, a server answering at the endpoint that the
// node does not trust (package servertrust): a CRI server a user started
// is neither "the operator's runtime" nor a pipe the release's containerd
// could serve.
func Decide(ctx context.Context, o Options, h Host) (*Installer, error) {
	in := &Installer{o: o, h: h, goos: o.Layout.GOOS}
	if err := ValidChoice(o.Choice); err != nil {
		return nil, err
	}
	// Whoever serves the endpoint now is judged whatever the choice: it
	// is the runtime the node would use, or it holds the pipe the
	// release's containerd would serve. One the node does not trust is
	// refused, never taken for "the operator's runtime".
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, criErr := h.CRI(cctx, o.Endpoint)
	cancel()
	var refused *servertrust.RefusedError
	if errors.As(criErr, &refused) {
		return nil, steps.WithFix(refused.WithoutFix(), refused.Fix)
	}
	if o.Choice == ChoiceHost {
		in.reason = "the host's runtime is used (" + FlagRuntime + " " + ChoiceHost + ")"
		return in, in.checkHostFolders()
	}
	bundled, err := in.bundlePresent()
	if err != nil {
		return nil, err
	}
	svc, err := h.Services.Installed(ServiceName)
	if err != nil {
		return nil, fmt.Errorf("looking for the %s service: %w", ServiceName, err)
	}
	switch {
	case o.Choice == ChoiceBundled && !bundled:
		return nil, steps.WithFix(fmt.Errorf("this release has no container runtime in %s", ospath.Join(in.goos, o.ReleaseDir, BundleDir)),
			"run join from the unpacked release zip, which carries it, or pass "+FlagRuntime+" "+ChoiceHost+" to use the host's containerd")
	case o.Choice == ChoiceBundled && svc:
		return nil, steps.WithFix(fmt.Errorf("the host already has a %s service", ServiceName),
			"keep it with "+FlagRuntime+" "+ChoiceAuto+", or remove it first (Stop-Service containerd; containerd.exe --unregister-service) to install the release's")
	case svc:
		in.reason = fmt.Sprintf("the host's %s service is used; it is not replaced (%s %s)", ServiceName, FlagRuntime, o.Choice)
		return in, in.checkHostFolders()
	case !bundled:
		in.reason = "this release carries no container runtime; the host's is used"
		return in, in.checkHostFolders()
	}
	if o.Choice == ChoiceAuto && criErr == nil {
		// A runtime that answers without a service (started by hand, or
		// another CRI), and whose server the node trusts (above), is the
		// operator's: leave it alone.
		in.reason = fmt.Sprintf("a container runtime already answers at %s and is used (%s %s)", o.Endpoint, FlagRuntime, ChoiceAuto)
		return in, in.checkHostFolders()
	}
	var inWay []string
	for _, p := range append(in.targets(), o.Layout.ContainerdConfigFile, RecordFile(o.Layout)) {
		ok, err := h.Exists(p)
		if err != nil {
			return nil, err
		}
		if ok {
			inWay = append(inWay, p)
		}
	}
	if len(inWay) > 0 {
		return nil, steps.WithFix(fmt.Errorf("files of another containerd installation are in the way: %s", strings.Join(inWay, ", ")),
			"move them away (or register that containerd as a service and pass "+FlagRuntime+" "+ChoiceAuto+"), then run join again")
	}
	// Folders that exist already are used only when judged safe: join
	// creates the others restricted from their first moment.
	if err := protect.Check(in.installFolders(), h.Protect, protect.Adopting); err != nil {
		return nil, steps.WithFix(err, fixFolders)
	}
	if err := CheckCNIFolders(in.cniFolders(), h.Protect); err != nil {
		return nil, err
	}
	if config.LinuxOnlySandboxImage(o.SandboxImage) {
		// The only place the node's pause image reaches a runtime:
		// containerd starts every sandbox from the one config.toml pins.
		return nil, steps.WithFix(fmt.Errorf("modules.edged.podSandboxImage %s has no Windows variant, and join would pin it in the bundled containerd's config.toml, so no pod could start", o.SandboxImage),
			"set modules.edged.podSandboxImage to "+config.WindowsSandboxImage+" or a pause image built for your Windows Server version, then run join again")
	}
	in.install = true
	in.reason = "no container runtime on this host: the release's is installed"
	return in, nil
}

// checkHostFolders refuses the host's containerd when a folder of its
// data, or one of its CNI folders and what they hold (HostFolders), is
// not judged safe: the node would run what its owner put there. A CNI
// folder that is missing passes here: the node's start creates it
// restricted (internal/node), and a network join writes creates it first.
func (in *Installer) checkHostFolders() error {
	data, cni, err := HostFolders(in.h, in.o.Layout)
	if err != nil {
		return err
	}
	if err := protect.Check(data, in.h.Protect, protect.Adopting); err != nil {
		return steps.WithFix(err, fixFolders)
	}
	return CheckCNIFolders(cni, in.h.Protect)
}

// Installs reports whether the bundled runtime is to be installed.
func (in *Installer) Installs() bool { return in.install }

// Reason says in one line what happens to the runtime and why.
func (in *Installer) Reason() string { return in.reason }

func (in *Installer) bundlePresent() (bool, error) {
	n := 0
	for _, f := range Files {
		ok, err := in.h.Exists(f.source(in.goos, in.o.ReleaseDir))
		if err != nil {
			return false, err
		}
		if ok {
			n++
		}
	}
	switch n {
	case 0:
		return false, nil
	case len(Files):
		return true, nil
	}
	return false, steps.WithFix(fmt.Errorf("the release's %s folder is incomplete", ospath.Join(in.goos, in.o.ReleaseDir, BundleDir)),
		"unpack the release zip again; its SHA256SUMS lists every file")
}

func (in *Installer) targets() []string {
	var out []string
	for _, f := range Files {
		out = append(out, f.Target(in.o.Layout))
	}
	return out
}

// dirs are the folders of containerd's installation, parents first.
func (in *Installer) dirs() []string {
	l := in.o.Layout
	return []string{l.ContainerdDir, BinDir(l), l.CNIBinDir, l.CNIConfDir}
}

// dataDirs are the folders of containerd's data join creates, parents
// first, and names in config.toml.
func (in *Installer) dataDirs() []string {
	l := in.o.Layout
	var out []string
	if l.ContainerdDataDir != "" {
		out = append(out, l.ContainerdDataDir)
	}
	return append(out, l.ContainerdRootDir, l.ContainerdStateDir)
}

func (in *Installer) version(name string) string {
	if v := in.o.Versions[name]; v != "" {
		return " " + v
	}
	return ""
}

// serviceConfig is containerd's service: automatic start, restarted after
// a failure like edgecore's, and the pre-shutdown wait containerd's own
// registration asks for.
func (in *Installer) serviceConfig() service.Config {
	l := in.o.Layout
	c := service.DefaultConfig("", "", 0)
	c.Name = ServiceName
	c.DisplayName = "containerd container runtime"
	c.Description = "containerd, installed from the edgecore release by `edgecore.exe join`; edgecore's service depends on it."
	c.Executable = ospath.Join(in.goos, BinDir(l), "containerd.exe")
	c.Args = []string{"--config", l.ContainerdConfigFile, "--run-service",
		"--log-file", ospath.Join(in.goos, l.ContainerdDir, "containerd.log")}
	c.RuntimeService = ""
	c.PreShutdownTimeout = preShutdown
	c.Environment = in.o.Environment
	return c
}

// Step names.
const (
	StepFiles   = "install the container runtime"
	StepService = "register the container runtime's service"
	StepStart   = "start the container runtime"
)

// Steps are the installation as plan steps, to run before edgecore's
// service is installed (which then depends on containerd's); none when the
// host keeps its own runtime.
func (in *Installer) Steps() []steps.Step {
	if !in.install {
		return nil
	}
	l := in.o.Layout
	cmdline, _ := in.serviceConfig().CommandLine()
	return []steps.Step{
		{
			Name: StepFiles,
			Description: fmt.Sprintf("%s: copy containerd%s, ctr and the runhcs shim%s to %s and the CNI plugins%s (win-bridge, win-overlay, host-local) to %s, "+
				"in %s open to SYSTEM and Administrators only; create containerd's root %s and state %s open to SYSTEM and Administrators only from their first moment (existing ones are used only when no one else owns or may change them); "+
				"write %s (sandbox image %s, root and state, CNI folders %s and %s)%s; record what was created in %s",
				in.reason, in.version("containerd"), in.version("hcsshim"), BinDir(l), in.version("cni-plugins"), l.CNIBinDir,
				l.ContainerdDir, l.ContainerdRootDir, l.ContainerdStateDir, l.ContainerdConfigFile, in.o.SandboxImage, l.CNIBinDir, l.CNIConfDir, in.registryLine(), RecordFile(l)),
			Do:   in.installFiles,
			Undo: in.removeFiles,
		},
		{
			Name: StepService,
			Description: fmt.Sprintf("install the service %q (automatic start, restarted after a failure, a host shutdown waits up to %v for it) running %s",
				ServiceName, preShutdown, cmdline),
			Do:   in.register,
			Undo: in.uninstall,
		},
		{
			// Undone by the service's removal, which stops it.
			Name:        StepStart,
			Description: fmt.Sprintf("start the service %q and wait up to %v for its CRI at %s", ServiceName, in.o.Timeout, in.o.Endpoint),
			Do:          in.start,
		},
	}
}

func (in *Installer) installFiles(_ context.Context, out io.Writer) error {
	l := in.o.Layout
	for _, d := range append(in.dirs(), in.dataDirs()...) {
		made, err := protect.Create(in.goos, in.restricted(), d, in.h.Protect)
		for _, m := range made {
			fmt.Fprintf(out, "created %s\n", m)
			// A parent above containerd's folders (%ProgramData% on a
			// host without one) is not the installation's to remove.
			if within(l, m) {
				in.rec.Dirs = append(in.rec.Dirs, m)
			}
		}
		if err != nil {
			return steps.WithFix(err, "make sure no file has that name and the drive is writable, then run join again")
		}
	}
	// A folder another account created between the check and now was
	// left as it is by Create: judged again, it is refused.
	if err := protect.Check(in.installFolders(), in.h.Protect, protect.Adopting); err != nil {
		return steps.WithFix(err, fixFolders)
	}
	if err := CheckCNIFolders(in.cniFolders(), in.h.Protect); err != nil {
		return err
	}
	for _, f := range Files {
		dst := f.Target(l)
		if err := in.h.CopyNew(f.source(in.goos, in.o.ReleaseDir), dst); err != nil {
			return fmt.Errorf("copy %s: %w", f.Name, err)
		}
		in.rec.Files = append(in.rec.Files, dst)
	}
	fmt.Fprintf(out, "copied %d programs to %s and %s\n", len(Files), BinDir(l), l.CNIBinDir)
	reg, err := in.installRegistries(out)
	if err != nil {
		return err
	}
	data, err := containerd.Generate(containerd.BundledConfig{
		CNI:          containerd.Dirs{BinDir: l.CNIBinDir, ConfDir: l.CNIConfDir},
		SandboxImage: in.o.SandboxImage,
		Root:         l.ContainerdRootDir,
		State:        l.ContainerdStateDir,
		Registry:     reg,
	})
	if err != nil {
		return err
	}
	if err := in.h.WriteNew(l.ContainerdConfigFile, data); err != nil {
		return fmt.Errorf("write %s: %w", l.ContainerdConfigFile, err)
	}
	in.rec.Files = append(in.rec.Files, l.ContainerdConfigFile)
	fmt.Fprintf(out, "wrote %s\n", l.ContainerdConfigFile)
	return in.writeRecord(out)
}

// Encode is the record as RecordFile holds it; `upgrade` writes it with
// the versions it installs.
func (r Record) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func (in *Installer) writeRecord(out io.Writer) error {
	in.rec.Versions = in.o.Versions
	data, err := in.rec.Encode()
	if err != nil {
		return err
	}
	p := RecordFile(in.o.Layout)
	// Replaced as a whole: written again once the service is registered.
	if err := in.h.Remove(p); err != nil && !isNotExist(in.h, p) {
		return err
	}
	if err := in.h.WriteNew(p, data); err != nil {
		return fmt.Errorf("record the installation in %s: %w", p, err)
	}
	fmt.Fprintf(out, "recorded in %s\n", p)
	return nil
}

func isNotExist(h Host, p string) bool {
	ok, err := h.Exists(p)
	return err == nil && !ok
}

func (in *Installer) removeFiles(out io.Writer) error {
	err := removeRecorded(in.h, in.rec, out, RecordFile(in.o.Layout))
	in.rec = Record{}
	return err
}

// removeRecorded removes the record's files, then the record, then its
// folders where empty, newest first; it goes on past failures.
func removeRecorded(h Host, rec Record, out io.Writer, recordFile string) error {
	var errs []error
	for i := len(rec.Files) - 1; i >= 0; i-- {
		f := rec.Files[i]
		if err := h.Remove(f); err != nil {
			if !isNotExist(h, f) {
				errs = append(errs, err)
			}
			continue
		}
		fmt.Fprintf(out, "removed %s\n", f)
	}
	if err := h.Remove(recordFile); err == nil {
		fmt.Fprintf(out, "removed %s\n", recordFile)
	}
	for i := len(rec.Dirs) - 1; i >= 0; i-- {
		d := rec.Dirs[i]
		if err := h.Remove(d); err != nil {
			if ok, _ := h.Exists(d); ok {
				// containerd's log, or CNI configurations written
				// since, are not the installation's to remove.
				fmt.Fprintf(out, "kept %s: it holds files the installation did not write\n", d)
			}
			continue
		}
		fmt.Fprintf(out, "removed %s\n", d)
	}
	return errors.Join(errs...)
}

func (in *Installer) register(_ context.Context, out io.Writer) error {
	c := in.serviceConfig()
	warnings, err := in.h.Services.Install(c)
	if err != nil {
		return err
	}
	in.registered = true
	in.rec.Service = c.Name
	for _, w := range warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	cmdline, _ := c.CommandLine()
	fmt.Fprintf(out, "installed service %q: %s\n", c.Name, cmdline)
	return in.writeRecord(out)
}

func (in *Installer) start(ctx context.Context, out io.Writer) error {
	c := in.serviceConfig()
	if err := in.h.Services.Start(c.Name); err != nil {
		return steps.WithFix(err, "read "+ospath.Join(in.goos, in.o.Layout.ContainerdDir, "containerd.log")+
			", or run `"+c.Executable+" --config \""+in.o.Layout.ContainerdConfigFile+"\"` in a console to see the error")
	}
	st, err := WaitCRI(ctx, in.h, in.o.Endpoint, in.o.Timeout)
	var refused *servertrust.RefusedError
	if errors.As(err, &refused) {
		return steps.WithFix(refused.WithoutFix(), refused.Fix)
	}
	if err != nil {
		return steps.WithFix(err, "read "+ospath.Join(in.goos, in.o.Layout.ContainerdDir, "containerd.log")+" for why containerd does not serve the CRI")
	}
	fmt.Fprintf(out, "started; %s %s answers at %s (CRI %s)\n", st.RuntimeName, st.RuntimeVersion, in.o.Endpoint, st.RuntimeAPIVersion)
	return nil
}

// WaitCRI asks the runtime at endpoint for Version and Status until it
// answers or timeout passes, and returns the last error then.
func WaitCRI(ctx context.Context, h Host, endpoint string, timeout time.Duration) (hostprobe.CRIStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := h.CRI(cctx, endpoint)
		ccancel()
		if err == nil {
			return st, nil
		}
		// A server the node does not trust answered: waiting longer
		// gives it more calls, not a runtime.
		var refused *servertrust.RefusedError
		if errors.As(err, &refused) {
			return st, err
		}
		if ctx.Err() != nil {
			return st, fmt.Errorf("the runtime does not answer at %s within %v: %w", endpoint, timeout, err)
		}
		_ = h.Clock.Sleep(ctx, 500*time.Millisecond) // ctx is checked above
	}
}

func (in *Installer) uninstall(out io.Writer) error {
	if !in.registered {
		return nil
	}
	err := in.h.Services.Uninstall(ServiceName)
	if err != nil && !errors.Is(err, service.ErrNotInstalled) {
		return err
	}
	in.registered = false
	in.rec.Service = ""
	fmt.Fprintf(out, "stopped and removed service %q\n", ServiceName)
	return nil
}

// ReadRecord reads what join installed; ok is false when it installed
// nothing (no record).
func ReadRecord(h Host, l config.Layout) (Record, bool, error) {
	p := RecordFile(l)
	ok, err := h.Exists(p)
	if err != nil || !ok {
		return Record{}, false, err
	}
	data, err := h.ReadFile(p)
	if err != nil {
		return Record{}, false, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, false, fmt.Errorf("%s is not a record of an installation: %v; remove containerd by hand", p, err)
	}
	// The record names only what the installation may have made: its
	// files and folders lie in containerd's folder and the CNI folders.
	for _, f := range append(append([]string{}, rec.Files...), rec.Dirs...) {
		if !within(l, f) {
			return Record{}, false, fmt.Errorf("%s names %s, outside %s: it was not written by join; remove containerd by hand", p, f, l.ContainerdDir)
		}
	}
	if rec.Service != "" && rec.Service != ServiceName {
		return Record{}, false, fmt.Errorf("%s names the service %q, not %q: it was not written by join; remove containerd by hand", p, rec.Service, ServiceName)
	}
	return rec, true, nil
}

func within(l config.Layout, p string) bool {
	for _, d := range []string{l.ContainerdDir, l.CNIBinDir, l.CNIConfDir, l.ContainerdDataDir, l.ContainerdRootDir, l.ContainerdStateDir} {
		if d == "" {
			continue
		}
		if ospath.Within(l.GOOS, d, p) {
			return true
		}
	}
	return false
}

// Remove takes away what rec says join installed: the service first, then
// the files, the record and the folders where empty. containerd's images
// and state (under C:\ProgramData\containerd) stay.
func Remove(out io.Writer, h Host, l config.Layout, rec Record) error {
	if rec.Service != "" {
		err := h.Services.Uninstall(rec.Service)
		switch {
		case err == nil:
			fmt.Fprintf(out, "stopped and removed service %q\n", rec.Service)
		case errors.Is(err, service.ErrNotInstalled):
			fmt.Fprintf(out, "service %q is not installed\n", rec.Service)
		default:
			return err
		}
	}
	return removeRecorded(h, rec, out, RecordFile(l))
}
