// Package takeover carries out `edgecore.exe takeover`: it moves a Windows
// node that upstream's keadm (v1.21 to v1.23) joined to this build,
// keeping the node's name, certificates, database and running containers.
//
// What keadm leaves on a Windows host (read in the module cache,
// github.com/kubeedge/kubeedge@v1.23.1/keadm/cmd/keadm/app/cmd, and at the
// tags v1.21.0 and v1.22.0 of upstream's repository):
//
//   - edge/join_windows.go (v1.23): the service "edgecore"
//     (constants.KubeEdgeBinaryName), created with mgr.CreateService as
//     DisplayName "edgecore", StartAutomatic, LocalSystem, no recovery
//     actions and no dependencies (util/extsystem/extsystem_windows.go),
//     running C:\usr\local\bin\edgecore.exe (KubeEdgeUsrBinPath) with
//     "--config C:\etc\kubeedge\config\edgecore.yaml --log-file
//     C:\var\log\kubeedge\edgecore.log" (the --log-file flag's default).
//     v1.21 and v1.22 registered the same service through NSSM instead
//     (util/nssm.go: "nssm install edgecore <exe> --config <file>", its
//     output in C:\var\log\kubeedge\out.log and err.log): the service
//     then runs nssm.exe, which this command does not take over.
//   - The configuration C:\etc\kubeedge\config\edgecore.yaml
//     (createEdgeConfigFiles): upstream's whole default configuration
//     written out (WriteTo), with windowsService: true on Windows since
//     v1.23 (api v1alpha2/default_windows.go DefaultWindowsService), the
//     join token kept in modules.edgeHub.token, hostnameOverride, the hub
//     and certificate addresses, labels and --set values.
//   - Certificates from the token (api common/constants/default_windows.go):
//     C:\etc\kubeedge\ca\rootCA.crt, C:\etc\kubeedge\certs\server.crt and
//     server.key; the database C:\var\lib\kubeedge\edgecore.db
//     (v1alpha2 DataBaseDataSource); the kubelet's root C:\var\lib\kubelet.
//   - Folders made with os.MkdirAll, inheriting C:\'s ACL (edge/join.go
//     createDirs): C:\etc\kubeedge, C:\etc\kubeedge\config,
//     C:\var\log\kubeedge, C:\var\lib\kubeedge, and C:\usr\local\bin; the
//     release tarball is unpacked in C:\etc\kubeedge and removed again.
//     C:\etc\kubeedge\bootstrap-edgecore.conf holds the token during the
//     join and is removed after it.
//   - keadm reset (reset_windows.go) stops and deletes the service and
//     removes C:\etc\kubeedge, C:\var\log\kubeedge, C:\var\lib\kubeedge,
//     C:\var\lib\edged and C:\usr\local\bin.
//
// Before anything is trusted, the host is judged by reading it only: the
// version of the binary the service runs is read from the file
// (version.OfFile), never by running it; every entry of the node's
// folders must be one keadm and upstream's edgecore leave (keadm.go), or
// the takeover is refused naming it; and the ACL checks that restricting
// would make are made. A dry run stops there and runs nothing.
//
// C:\usr\local\bin, keadm's folder of the binary, inherits C:\'s ACL,
// under which every user may add files (a DLL the service would load):
// once its only entry is found to be keadm's edgecore.exe, it is
// restricted like the node's other folders (keadm's reset removes it
// whole, so it holds nothing else of the host's).
//
// The takeover is a plan of steps (package steps), like join: each says
// what it does; a failure undoes the steps done. Its last step is an
// upgrade journal (upgrade.Adopt), so the binary, configuration and
// database are backed up, replaced, held to the upgrade's health gate and
// restored when the node does not come back Ready, and a power cut in the
// middle is finished or rolled back by the next edgecore that starts.
package takeover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Options are the inputs of `edgecore.exe takeover`.
type Options struct {
	// ServiceName is the service keadm installed (service.DefaultName).
	ServiceName string
	// Timeout bounds the health gate after the new binary starts.
	Timeout time.Duration
	// DryRun prints what would be done and changes nothing.
	DryRun bool
	// Token, when given, is a join token (`keadm gettoken`) with which
	// the node applies for a new certificate and key at its first start
	// with this build: keadm left the old key readable by every user.
	Token string
	// Executable is this edgecore.exe, which replaces keadm's; Host the
	// machine.
	Executable string
	Host       config.Host
	// Layout is the node's directories on Host.
	Layout config.Layout
}

// NewOptions are the defaults on d's host.
func NewOptions(d *deps.Dependencies) *Options {
	return &Options{ServiceName: service.DefaultName, Timeout: upgrade.DefaultTimeout, Host: d.Host, Layout: d.Layout}
}

// AddFlags binds the flags to o; the defaults are o's values.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ServiceName, "service", o.ServiceName, "The service upstream's keadm installed")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long the node has, after this build starts, to connect to cloudcore and be Ready before everything is put back")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Print what takeover would keep and change, and change nothing")
	fs.StringVar(&o.Token, "token", o.Token, "A token from `keadm gettoken`: the node applies for a new certificate and key with it at its first start with this build, "+
		"since keadm left the old key readable by every user; the old ones are removed once the node is Ready with the new ones, and put back if it is not")
}

// Complete fills in the host, its layout and this program's path from d.
func (o *Options) Complete(d *deps.Dependencies) error {
	o.Host, o.Layout = d.Host, d.Layout
	exe, err := d.ExecutablePath()
	if err != nil {
		return fmt.Errorf("finding the path of this program, which replaces keadm's edgecore.exe: %w", err)
	}
	o.Executable = exe
	return nil
}

// Validate checks the flags.
func (o Options) Validate() error {
	var errs []string
	if o.ServiceName == "" {
		errs = append(errs, "--service: give the service keadm installed, "+service.DefaultName)
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Sprintf("--timeout %v: give how long to wait for the node to be Ready, for example 3m", o.Timeout))
	}
	if o.Token != "" {
		if err := config.CheckJoinToken(field.NewPath("--token"), strings.TrimSpace(o.Token)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if o.Executable != "" && !ospath.IsAbs(o.Host.GOOS, o.Executable) {
		errs = append(errs, fmt.Sprintf("this program's path %q is not absolute: run it by its full path", o.Executable))
	}
	if len(errs) > 0 {
		return errors.New("takeover options: " + strings.Join(errs, "; "))
	}
	return nil
}

// System is what the takeover reads and changes on the host; tests pass
// recording fakes.
//
// Nothing in it runs a program of the host: the keadm host is judged
// before anything of it is trusted, and a dry run changes and runs
// nothing.
type System struct {
	Services deps.Services
	// ReadFile reads a file; Exists says whether a path exists; ReadDir
	// lists a folder without following links (os.ReadDir).
	ReadFile func(path string) ([]byte, error)
	Exists   func(path string) (bool, error)
	ReadDir  func(path string) ([]fs.DirEntry, error)
	Elevated func() (bool, error)
	Protect  protect.Host
	// Stamp reads which edgecore a binary is and its version from the
	// file (version.OfFile), without running it.
	Stamp func(exe string) (version.Stamp, error)
	// Adopt carries out the replacement as an upgrade journal
	// (upgrade.Adopt on the host's Env).
	Adopt func(ctx context.Context, out io.Writer, a upgrade.Adoption) (upgrade.Result, error)
	// Version is this build's version.
	Version string
}

// Takeover is a takeover whose installation has been read, ready to print
// or run.
type Takeover struct {
	o       Options
	sys     System
	goos    string
	in      upgrade.Installed
	stamp   version.Stamp
	adopted *config.Adoption
	// retire are the certificate and key moved aside for new ones
	// (Options.Token).
	retire []string
	// oldLine and newLine are the service's command line before and after.
	oldLine, newLine string
	certs            []string
	protected        []protect.Target

	// What the steps did, for their undo, and the replacement's result.
	lineSet bool
	result  *upgrade.Result
}

// FromLabel names upstream's installation in the journal and the backup.
const FromLabel = "keadm"

// nssmBinary is the service host of keadm v1.21 and v1.22.
const nssmBinary = "nssm.exe"

// New reads the installation the service names, without changing
// anything: the service's command line, its configuration (which must
// load once only what this build needs is changed), the certificates, and
// the description of the node's folders.
func New(o Options, sys System) (*Takeover, error) {
	goos := o.Host.GOOS
	t := &Takeover{o: o, sys: sys, goos: goos}
	st, err := sys.Services.Query(o.ServiceName)
	if err != nil {
		return nil, err
	}
	if !st.Installed {
		return nil, steps.WithFix(fmt.Errorf("there is no service %q on this host, so no node to take over", o.ServiceName),
			"join the host with `"+config.ExecutableName(goos)+" join`; if keadm installed the service under another name, give it with --service")
	}
	t.oldLine = st.CommandLine
	argv, err := service.SplitCommandLine(st.CommandLine)
	if err != nil {
		return nil, fmt.Errorf("the service %q: %w", o.ServiceName, err)
	}
	if exe := strings.ToLower(ospath.Clean(goos, argv[0])); exe == nssmBinary || strings.HasSuffix(exe, ospath.Separator(goos)+nssmBinary) {
		return nil, steps.WithFix(fmt.Errorf("the service %q runs %s: keadm v1.21 or v1.22 installed it through NSSM, which this command does not take over", o.ServiceName, argv[0]),
			"upgrade the node with keadm to v1.23 first (it installs a native service), or move it with `"+config.ExecutableName(goos)+" reset --keep-data` and `join`")
	}
	// The configuration is read once, here, and adopted from that
	// reading: the database path FindInstalled asks for is the adopted
	// configuration's.
	facts := upgrade.Facts{
		DataSource: func(path string) (string, error) {
			raw, err := sys.ReadFile(path)
			if err != nil {
				return "", err
			}
			if t.adopted, err = config.Adopt(raw, o.Host, strings.TrimSpace(o.Token)); err != nil {
				return "", steps.WithFix(fmt.Errorf("the configuration %s: %w", path, err),
					"correct the field named above in "+path+" (keadm's edgecore keeps running meanwhile), then run takeover again")
			}
			return t.adopted.Config.DataBase.DataSource, nil
		},
		// Upstream's edgecore has no version of this release line; the
		// journal names it by FromLabel.
		VersionOf: func(string) (string, error) { return "", nil },
	}
	e := upgrade.Env{GOOS: goos, Services: sys.Services}
	if t.in, err = upgrade.FindInstalled(e, facts, o.ServiceName); err != nil {
		return nil, err
	}
	// What the service runs, read from the file: running it would be
	// trusting it, and upstream's edgecore has no version command (it
	// would start a second node on the live database).
	if t.stamp, err = sys.Stamp(t.in.Executable); err != nil {
		return nil, steps.WithFix(fmt.Errorf("the service %q runs %s, which is not upstream's edgecore: %w", o.ServiceName, t.in.Executable, err),
			"takeover moves a node keadm joined; check what the service runs (`sc.exe qc "+o.ServiceName+"`)")
	}
	if t.stamp.Program == version.ProgramThis {
		return nil, steps.WithFix(fmt.Errorf("the service %q already runs %s (%s): there is nothing to take over", o.ServiceName, t.stamp, t.in.ConfigFile),
			"to change its version use `"+config.ExecutableName(goos)+" upgrade` or `rollback`")
	}
	c := t.adopted.Config
	hub := c.Modules.EdgeHub
	t.certs = []string{hub.TLSCAFile, hub.TLSCertFile, hub.TLSPrivateKeyFile}
	var missing []string
	for _, p := range t.certs {
		ok, err := sys.Exists(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return nil, steps.WithFix(fmt.Errorf("the node has no certificates yet (%s missing): it never finished its join", strings.Join(missing, ", ")),
			"let keadm's join finish (the node Ready in `kubectl get nodes`), or join the host with `"+config.ExecutableName(goos)+" join` after `keadm reset`")
	}

	// This build's service: the same binary path (now this build) and
	// configuration, with keadm's log file kept when it is not the
	// default.
	l := o.Layout
	svc := service.DefaultConfig(t.in.Executable, t.in.ConfigFile, config.NodeShutdownOf(c, goos).Grace)
	if lf, ok := upgrade.ArgValue(argv[1:], "--log-file"); ok && lf != "" {
		if !ospath.Same(goos, lf, l.LogFile) {
			svc.Args = append(svc.Args, "--log-file", lf)
		}
		l.LogDir, l.LogFile = ospath.Dir(goos, lf), lf
	}
	if t.newLine, err = svc.CommandLine(); err != nil {
		return nil, err
	}
	files := protect.ConfigFiles(t.in.ConfigFile, upgrade.SettingsPath(goos, t.in.ConfigFile))
	binDir, exe := ospath.Dir(goos, t.in.Executable), t.in.Executable
	if ospath.Same(goos, binDir, keadmBinDir(o.Host)) {
		// keadm's own folder, which its reset removes whole: restricted
		// like the node's other folders, since C:\'s ACL lets every user
		// add files to it (a DLL there is loaded by the service), once
		// its entries are found to be keadm's (below).
		files = append(files, protect.Target{What: "keadm's folder of the edgecore.exe the service runs", Path: binDir, Restrict: true},
			protect.Target{What: "the edgecore.exe the service runs", Path: exe, File: true})
		exe = ""
	}
	if t.protected, err = protect.Targets(c, l, exe, files...); err != nil {
		return nil, err
	}
	// Every folder the running node's configuration names is that node's
	// (keadm or upstream's edgecore made it), wherever it is: it is taken
	// over once its entries are judged (protect's owners, then keadm's
	// allow-list below), not refused as someone else's folder.
	for i := range t.protected {
		if t.protected[i].Restrict && !t.protected[i].File {
			t.protected[i].Own = true
		}
	}
	// What restricting would refuse is refused here, a dry run included:
	// the check reads and changes nothing.
	if err := protect.Check(t.protected, sys.Protect, protect.Adopting); err != nil {
		return nil, err
	}
	// Nothing planted is taken over: every entry of the node's folders
	// must be what keadm and upstream's edgecore leave.
	roots := append(protect.Restricted(t.protected), binDir)
	lv := keadmLeaves(c, l, t.in.Executable, t.in.ConfigFile, l.LogFile)
	strays, err := lv.walk(roots, sys.ReadDir)
	if err != nil {
		return nil, err
	}
	if len(strays) > 0 {
		se := &StrayError{Strays: strays}
		return nil, steps.WithFix(se, se.Fix())
	}
	if o.Token != "" {
		t.retire = []string{hub.TLSCertFile, hub.TLSPrivateKeyFile}
	}
	return t, nil
}

// keadmBinDir is the folder keadm puts edgecore.exe in
// (constants.KubeEdgeUsrBinPath of upstream's api for Windows).
func keadmBinDir(h config.Host) string {
	drive := h.SystemDrive
	if drive == "" {
		drive = config.DefaultSystemDrive
	}
	return ospath.Join(h.GOOS, drive, "usr", "local", "bin")
}

// The steps of a takeover.
const (
	stepRead    = "read the installation"
	stepACL     = "restrict access"
	stepService = "point the service at this build"
	stepReplace = "replace the binary and the configuration"
)

// Plan is the takeover as steps.
func (t *Takeover) Plan() steps.Plan {
	in := t.in
	return steps.Plan{Verb: "takeover", Steps: []steps.Step{
		{
			Name: stepRead,
			Description: fmt.Sprintf("the service runs %s, %s%s; node %s: keep its name, its certificates %s, its database %s and its running containers; in %s change %s",
				in.Executable, t.stamp, t.stampFrom(), t.NodeName(), strings.Join(t.certs, ", "), in.DataSource, in.ConfigFile, t.changes()),
			Do: t.read,
		},
		steps.Elevated("takeover", t.sys.Elevated),
		{
			Name: stepACL,
			Description: fmt.Sprintf("refuse if another account than SYSTEM and Administrators owns a folder of the node or may change %s; then allow only SYSTEM and Administrators into %s, as join does (kept if the takeover is undone: keadm's edgecore runs as SYSTEM)",
				in.Executable, strings.Join(protect.Restricted(t.protected), " and ")),
			Do: t.restrict,
		},
		{
			Name: stepService,
			Description: fmt.Sprintf("set the service %q's command line to %s (was %s), from the next start",
				t.o.ServiceName, t.newLine, t.oldLine),
			Do:   t.setLine,
			Undo: t.resetLine,
		},
		{
			Name: stepReplace,
			Description: fmt.Sprintf("stop the service; back up %s, %s and %s; put %s in place of %s and the changed configuration in place of %s; %s"+
				"start the service and wait up to %v for the hub connection and the node's Ready status; on failure put the backup back and start keadm's edgecore again",
				in.Executable, in.ConfigFile, in.DataSource, t.o.Executable, in.Executable, in.ConfigFile, t.rotation(), t.o.Timeout),
			Do: t.replace,
		},
	}}
}

// rotation is what the replacement does to the node's certificate.
func (t *Takeover) rotation() string {
	if len(t.retire) == 0 {
		return ""
	}
	return fmt.Sprintf("move %s aside, so that this build applies for a new certificate and key with the token given at its start "+
		"(they are removed once the node is Ready with new ones, and put back if it is not); ", strings.Join(t.retire, " and "))
}

// NodeName is the name the node keeps.
func (t *Takeover) NodeName() string { return t.adopted.Config.Modules.Edged.HostnameOverride }

func (t *Takeover) changes() string {
	if len(t.adopted.Changes) == 0 {
		return "nothing"
	}
	var s []string
	for _, c := range t.adopted.Changes {
		s = append(s, fmt.Sprintf("%s from %s to %s", c.Field, c.From, c.To))
	}
	return strings.Join(s, " and ")
}

// stampFrom says where the binary's version was read.
func (t *Takeover) stampFrom() string {
	if t.stamp.From == "" {
		return " (read from the file)"
	}
	return " (read from the file: " + t.stamp.From + ")"
}

func (t *Takeover) read(_ context.Context, out io.Writer) error {
	fmt.Fprintf(out, "the service %q runs %s, %s%s, with %s\n", t.o.ServiceName, t.in.Executable, t.stamp, t.stampFrom(), t.in.ConfigFile)
	fmt.Fprintf(out, "node %s; certificates %s exist\n", t.NodeName(), strings.Join(t.certs, ", "))
	for _, c := range t.adopted.Changes {
		fmt.Fprintf(out, "%s: written as %s (was %s)\n", c.Field, c.To, c.From)
	}
	for _, r := range t.adopted.Rewrites {
		fmt.Fprintf(out, "%s: read as %s (written as %s; edgecore reads it so each time)\n", r.Field, r.To, r.From)
	}
	return nil
}

func (t *Takeover) restrict(_ context.Context, out io.Writer) error {
	// Enforce audits first and changes nothing when it refuses one.
	return protect.EnforceAll(t.protected, t.sys.Protect, out)
}

func (t *Takeover) setLine(_ context.Context, out io.Writer) error {
	if err := t.sys.Services.SetCommandLine(t.o.ServiceName, t.newLine); err != nil {
		return err
	}
	t.lineSet = true
	fmt.Fprintf(out, "the service %q will run %s\n", t.o.ServiceName, t.newLine)
	return nil
}

// resetLine puts keadm's command line back and, when the service runs (the
// failed takeover started keadm's edgecore again), restarts it so that it
// runs exactly as keadm left it.
func (t *Takeover) resetLine(out io.Writer) error {
	if !t.lineSet {
		return nil
	}
	name := t.o.ServiceName
	if err := t.sys.Services.SetCommandLine(name, t.oldLine); err != nil {
		return err
	}
	t.lineSet = false
	fmt.Fprintf(out, "the service %q runs %s again\n", name, t.oldLine)
	st, err := t.sys.Services.Query(name)
	if err != nil || st.State != service.Running {
		return err
	}
	if err := t.sys.Services.Stop(name); err != nil {
		return err
	}
	if err := t.sys.Services.Start(name); err != nil {
		return err
	}
	fmt.Fprintf(out, "restarted the service %q with it\n", name)
	return nil
}

// KindTakeover names the command in its result line.
const KindTakeover upgrade.Kind = "takeover"

// replace runs the upgrade journal; when the node does not come back, the
// journal has already put keadm's binary, configuration and database back
// and started them, and the earlier steps are undone after it.
func (t *Takeover) replace(ctx context.Context, out io.Writer) error {
	r, err := t.sys.Adopt(ctx, out, upgrade.Adoption{
		Installed: t.in, FromLabel: FromLabel, Binary: t.o.Executable, Config: t.adopted.Data, Timeout: t.o.Timeout, Retire: t.retire,
	})
	if err != nil {
		return err
	}
	r.Action = KindTakeover
	t.result = &r
	if r.Status != upgrade.StatusSuccess {
		return &ResultError{Result: r}
	}
	return nil
}

// ResultError is a takeover whose replacement step did not succeed; the
// result says whether keadm's installation runs again (rolled-back) or
// the operator must act (failed).
type ResultError struct{ Result upgrade.Result }

func (e *ResultError) Error() string {
	return fmt.Sprintf("the node did not come back with this build (%s): %s", e.Result.Status, e.Result.Reason)
}

// Run reads the installation and takes it over, printing each step; with
// o.DryRun it prints the plan and changes nothing.
func Run(ctx context.Context, out io.Writer, o Options, sys System) error {
	t, err := New(o, sys)
	if err != nil {
		return &steps.StepError{Verb: "takeover", Index: 1, Total: 5, Step: stepRead, Err: err}
	}
	p := t.Plan()
	exe := config.ExecutableName(t.goos)
	if o.DryRun {
		fmt.Fprintf(out, "Dry run: %s takeover would do the following; nothing is changed.\n", exe)
		p.Print(out)
		return nil
	}
	fmt.Fprintf(out, "Taking node %s over from keadm's installation\n", t.NodeName())
	err = p.Run(ctx, out)
	// The result line comes last and unindented, as upgrade's does, for
	// automation; a refusal before the replacement has none.
	defer func() {
		if t.result != nil {
			fmt.Fprintln(out, t.result.Line())
		}
	}()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Node %s runs this build as the service %q, with its certificates, database and containers.\n", t.NodeName(), o.ServiceName)
	if len(t.retire) == 0 {
		fmt.Fprintf(out, "keadm left the node's key and database readable by every user of this host: treat the key and the Secrets cached in the database as known, "+
			"and rotate the certificate (docs/from-keadm.md, \"Rotate the certificate\"); takeover --token does it in the same step.\n")
	}
	fmt.Fprintf(out, "keadm's binary, configuration and database are kept in the backup: `%s rollback` goes back to them.\n", exe)
	return nil
}
