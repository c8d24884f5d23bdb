// Package reset undoes a join: `edgecore.exe reset` removes the service
// and what join wrote, and only from the node's own directories.
package reset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Options are the inputs of `edgecore.exe reset`.
type Options struct {
	// ConfigFile is the node's configuration (--config); the paths of the
	// certificates and the database are read from it.
	ConfigFile string
	// LogFile is edgecore's log; its directory is removed.
	LogFile string
	// KeepData keeps the database (--keep-data).
	KeepData bool
	// Force resets without asking (--force).
	Force bool
	// DryRun prints what reset would remove and changes nothing.
	DryRun bool
	Host   config.Host
	// Layout is the node's directories and files on Host (deps.Layout).
	Layout      config.Layout
	ServiceName string
	// RemoveNetwork is --network; Complete then sets Network.
	RemoveNetwork bool
	// Network, when set, removes the HNS network and endpoint that
	// cni-config created, before the empty directories are removed.
	Network NetworkRemover
	// NetworkOf makes Network for the process's dependencies; the
	// command sets it (podnet.HostRemover).
	NetworkOf func(*deps.Dependencies) NetworkRemover
}

// NetworkRemover removes the pod network cni-config created, and only that
// (podnet.Remover).
type NetworkRemover interface {
	// Describe is the step's line for --dry-run and the confirmation.
	Describe() string
	Remove(ctx context.Context, out io.Writer) error
}

// ErrCancelled is returned when the operator does not confirm the reset.
var ErrCancelled = errors.New("reset cancelled; nothing was changed")

// Run removes what join set up: the service, the configuration, the
// certificates, the database (unless o.KeepData), the upgrade backups and
// journal, and the logs. It removes files only inside the node's own
// directories (config.Layout.NodeDirs): a file the configuration names
// elsewhere is left and named in the output with its field, and a
// --config that cannot be read as a configuration is never removed.
// containerd, its containers and images, the CNI configuration and the
// kubelet's directory are left alone. Unless o.Force, it shows what it will remove
// and asks on out, reading the answer from in; when in is not a terminal
// (interactive false) it refuses and asks for --force instead.
func Run(ctx context.Context, in io.Reader, out io.Writer, interactive bool, o Options, sys join.System) error {
	r := newReset(o, sys, out)
	p := r.plan()
	if o.DryRun {
		fmt.Fprintf(out, "Dry run: %s reset would do the following; nothing is changed.\n", config.ExecutableName(r.goos))
		p.Print(out)
		return nil
	}
	if !o.Force {
		if !interactive {
			return errors.New("standard input is not a terminal, so reset cannot ask for confirmation: pass --force to reset without asking")
		}
		fmt.Fprintf(out, "Reset removes node %s from this host:\n", r.nodeName())
		p.Print(out)
		ok, err := Confirm(in, out, "Reset this node?")
		if err != nil {
			return err
		}
		if !ok {
			return ErrCancelled
		}
	}
	fmt.Fprintf(out, "Resetting node %s\n", r.nodeName())
	if err := p.Run(ctx, out); err != nil {
		return err
	}
	// What of the pod network stays: the CNI configuration unless join
	// wrote it, and an HNS network (reset --network removes it).
	cniConf := "the CNI configuration, "
	switch {
	case r.networkRemoved && r.keptHNS != "":
		cniConf = fmt.Sprintf("the HNS network %q (reset --network removes it), ", r.keptHNS)
	case r.networkRemoved:
		cniConf = ""
	}
	if r.runtimeRemoved {
		fmt.Fprintf(out, "Node %s is reset, and the container runtime join installed is removed. containerd's images and state under C:\\ProgramData\\containerd, %sand %s were left alone.\n",
			r.nodeName(), cniConf, r.cfg.Modules.Edged.RootDirectory)
	} else {
		fmt.Fprintf(out, "Node %s is reset. containerd with its containers and images, %sand %s were left alone.\n",
			r.nodeName(), cniConf, r.cfg.Modules.Edged.RootDirectory)
	}
	fmt.Fprintf(out, "The node object stays in the cluster; to remove it, on the cloud side: kubectl delete node %s (do so before this host joins again under the same name: the new node reads its node object from its own database, which reset emptied, and would stay NotReady)\n", r.nodeName())
	return nil
}

// Confirm asks question on out and reads a yes or no from in. Anything but
// y or yes, an empty line and end of input included, is no.
func Confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N]: ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	if line == "" || !strings.HasSuffix(line, "\n") {
		// No answer: end the prompt's line before the caller's message.
		fmt.Fprintln(out)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

type reset struct {
	o    Options
	sys  join.System
	goos string
	cfg  *v1alpha2.EdgeCoreConfig
	// loaded is set when cfg was read from o.ConfigFile. Otherwise the
	// file is not known to be a configuration (a mistyped --config may
	// name any file) and is never removed.
	loaded bool
	// layout gives the node's own directories, the only ones reset
	// removes files from.
	layout config.Layout
	// runtimeRemoved is set once the container runtime join installed
	// from the release is gone, for the closing line.
	runtimeRemoved bool
	// networkRemoved is set once the CNI configuration join wrote is
	// gone, for the closing line.
	networkRemoved bool
	// keptHNS is the HNS network whose record reset kept for reset
	// --network, "" when none.
	keptHNS string
}

// named is a file reset would remove, with the field or flag that names
// it, for the message when it lies outside the node's directories.
type named struct {
	field, path string
}

// newReset reads the node's configuration for the paths to remove. A
// missing or unreadable one gives the default paths, which is where join
// puts everything; out says which was used.
func newReset(o Options, sys join.System, out io.Writer) *reset {
	if o.ServiceName == "" {
		o.ServiceName = service.DefaultName
	}
	// Reset's bounds compare paths in ospath's one form (Within), so the
	// flags' paths are read and removed in that form too: a --config of
	// C:\etc\kubeedge \config\edgecore.yaml counts as inside
	// C:\etc\kubeedge, and must not remove the file of that look-alike
	// folder, which is outside. The configuration's own paths are in that
	// form once loaded (config.Normalize).
	for _, p := range []*string{&o.ConfigFile, &o.LogFile} {
		if *p != "" {
			*p = ospath.Clean(o.Host.GOOS, *p)
		}
	}
	r := &reset{o: o, sys: sys, goos: o.Host.GOOS, layout: o.Layout}
	ok, err := hostfs.Exists(sys.FS, o.ConfigFile)
	if err == nil && ok {
		r.cfg, err = sys.LoadConfig(o.ConfigFile)
	}
	if r.cfg != nil {
		r.loaded = true
		return r
	}
	switch {
	case err != nil:
		fmt.Fprintf(out, "Cannot read %s (%v); removing from the default locations.\n", o.ConfigFile, steps.FirstLine(err, steps.Cut))
	default:
		fmt.Fprintf(out, "No configuration at %s; removing from the default locations.\n", o.ConfigFile)
	}
	// Sample fails only for an unknown kind.
	r.cfg, _ = config.Sample(config.KindDefault, o.Host)
	return r
}

func (r *reset) nodeName() string { return r.cfg.Modules.Edged.HostnameOverride }

func (r *reset) certFiles() []named {
	hub := r.cfg.Modules.EdgeHub
	return []named{
		{"modules.edgeHub.tlsCaFile", hub.TLSCAFile},
		{"modules.edgeHub.tlsCertFile", hub.TLSCertFile},
		{"modules.edgeHub.tlsPrivateKeyFile", hub.TLSPrivateKeyFile},
	}
}

func (r *reset) dbFiles() []named {
	db := r.cfg.DataBase.DataSource
	const f = "database.dataSource"
	return []named{{f, db}, {f, db + "-journal"}, {f, db + "-wal"}, {f, db + "-shm"}}
}

// configFiles is the configuration, when reset may remove it, and the
// record a join that did not end left beside it.
func (r *reset) configFiles() []named {
	return []named{{"--config", r.o.ConfigFile}, {"the record of an interrupted join", r.layout.JoinRecord}}
}

// inside reports whether p lies inside one of the node's own directories.
// Only the path's text is judged here; removeFiles also refuses a path
// that passes through a link. A path with a name whose place only the
// disk knows (an 8.3 short name, a stream, a device path: ospath.BadName)
// is not judged inside: it may be anywhere.
func (r *reset) inside(p string) bool {
	if !ospath.IsAbs(r.goos, p) {
		return false
	}
	if name, _, _ := ospath.BadName(r.goos, p); name != "" {
		return false
	}
	for _, d := range r.layout.NodeDirs() {
		if ospath.Within(r.goos, d, p) {
			return true
		}
	}
	return false
}

// split separates the files reset may remove from those it leaves.
func (r *reset) split(files []named) (remove []string, leave []named) {
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if r.inside(f.path) {
			remove = append(remove, f.path)
		} else {
			leave = append(leave, f)
		}
	}
	return remove, leave
}

// describe is a step's description: what it removes, and what it leaves
// because it lies outside the node's directories.
func (r *reset) describe(files []named) string {
	remove, leave := r.split(files)
	var parts []string
	if len(remove) > 0 {
		parts = append(parts, "remove "+strings.Join(remove, ", "))
	}
	for _, f := range leave {
		parts = append(parts, fmt.Sprintf("leave %s (%s): outside the node's directories", f.path, f.field))
	}
	if len(parts) == 0 {
		return "nothing to remove"
	}
	return strings.Join(parts, "; ")
}

// outsideLine says why a file is left, and what the operator may do.
func (r *reset) outsideLine(f named) string {
	return fmt.Sprintf("left %s, which %s names: it is outside the node's directories (%s), and reset removes nothing outside them; "+
		"remove it yourself if nothing else uses it", f.path, f.field, strings.Join(r.layout.NodeDirs(), ", "))
}

// emptyDirs are removed at the end when nothing is left in them, deepest
// first: the directories of the files removed and the kubeedge directory.
func (r *reset) emptyDirs() []string {
	var dirs []string
	add := func(d string) { dirs = ospath.AppendNew(r.goos, dirs, d) }
	add(ospath.Dir(r.goos, r.o.ConfigFile))
	for _, f := range r.certFiles() {
		add(ospath.Dir(r.goos, f.path))
	}
	if !r.o.KeepData {
		add(ospath.Dir(r.goos, r.cfg.DataBase.DataSource))
	}
	if k := r.cfg.Modules.Edged.TailoredKubeletConfig; k != nil && k.StaticPodPath != "" {
		add(k.StaticPodPath)
	}
	add(r.layout.KubeEdgeDir)
	// An empty directory elsewhere may still be someone's: only the
	// node's own are removed.
	kept := dirs[:0]
	for _, d := range dirs {
		if r.inside(d) {
			kept = append(kept, d)
		}
	}
	dirs = kept
	// Deeper paths first, so that a parent is tried after its children.
	for i := 1; i < len(dirs); i++ {
		for k := i; k > 0 && len(dirs[k]) > len(dirs[k-1]); k-- {
			dirs[k], dirs[k-1] = dirs[k-1], dirs[k]
		}
	}
	return dirs
}

const fixResetAgain = "then run reset again; it skips what is already gone"

func (r *reset) plan() steps.Plan {
	logDir := ospath.Dir(r.goos, r.o.LogFile)
	list := []steps.Step{
		steps.Elevated("reset", r.sys.Elevated),
		{
			Name:        "stop and remove the service",
			Description: fmt.Sprintf("stop the service %q, wait until it has stopped, and delete it", r.o.ServiceName),
			Do:          r.removeService,
		},
	}
	list = append(list, r.proxierSteps()...)
	list = append(list, r.networkResetSteps()...)
	list = append(list, r.runtimeSteps()...)
	list = append(list,
		steps.Step{
			Name:        "remove the certificates",
			Description: r.describe(r.certFiles()),
			Do: func(_ context.Context, out io.Writer) error {
				return r.removeFiles(out, r.certFiles())
			},
		},
	)
	if !r.o.KeepData {
		list = append(list, steps.Step{
			Name:        "remove the database",
			Description: r.describe(r.dbFiles()[:1]) + " (--keep-data keeps it)",
			Do: func(_ context.Context, out io.Writer) error {
				return r.removeFiles(out, r.dbFiles())
			},
		})
	}
	backups := []string{r.layout.BackupDir, r.layout.UpgradeDir}
	list = append(list,
		steps.Step{
			// Backups hold copies of the configuration (with the join
			// token) and of the database: leaving them would keep what
			// reset just removed.
			Name:        "remove the upgrade backups and journal",
			Description: "remove " + strings.Join(backups, " and ") + " and everything in them (copies of the binary, configuration and database)",
			Do: func(_ context.Context, out io.Writer) error {
				return r.removeTrees(out, backups)
			},
		},
		steps.Step{
			Name:        "remove the logs",
			Description: "remove " + logDir + " and everything in it",
			Do: func(_ context.Context, out io.Writer) error {
				if !r.inside(logDir) {
					fmt.Fprintln(out, r.outsideLine(named{"the log file", logDir}))
					return nil
				}
				return r.removeTrees(out, []string{logDir})
			},
		},
	)
	if r.o.Network != nil {
		list = append(list, steps.Step{
			Name:        "remove the pod network",
			Description: r.o.Network.Describe(),
			Do: func(ctx context.Context, out io.Writer) error {
				return steps.WithFix(r.o.Network.Remove(ctx, out), "run reset --network again once that is fixed; it skips what is already gone")
			},
		})
	}
	if rec := r.sys.Protect.Record; rec != "" && r.goos == config.Windows {
		list = append(list, steps.Step{
			Name: "give folders back their access control lists",
			Description: "give each folder edgecore restricted that existed before it, as " + rec + " records them, the owner and access control list it had, " +
				"where it is empty, name the others with the command that does it, and remove " + rec,
			Do: r.restoreACLs,
		})
	}
	// The configuration last: it names the certificates, the database
	// and the other files, and a reset that stops half-way (a power cut)
	// and is run again reads their paths from it.
	list = append(list,
		r.configStep(),
		steps.Step{
			Name:        "remove empty directories",
			Description: "remove " + strings.Join(r.emptyDirs(), ", ") + " where empty",
			Do:          r.removeEmptyDirs,
		},
	)
	return steps.Plan{Verb: "reset", Steps: list}
}

// runtimeSteps remove the container runtime join installed from the
// release, as its record lists it, after edgecore's service, which depends
// on it; none when join installed none. A record that cannot be read is
// reported and nothing of containerd is touched.
func (r *reset) runtimeSteps() []steps.Step {
	rec, ok, err := runtimeinstall.ReadRecord(r.sys.Runtime, r.layout)
	if err != nil {
		return []steps.Step{{
			Name:        "keep the container runtime",
			Description: fmt.Sprintf("keep containerd: %v", err),
			Do: func(_ context.Context, out io.Writer) error {
				fmt.Fprintf(out, "kept containerd: %v\n", err)
				return nil
			},
		}}
	}
	if !ok {
		return nil
	}
	what := strings.Join(rec.Files, ", ")
	if rec.Service != "" {
		what = fmt.Sprintf("the service %q, %s", rec.Service, what)
	}
	return []steps.Step{{
		Name: "remove the container runtime join installed",
		Description: fmt.Sprintf("stop and delete %s, and the folders join created where empty (containerd's images and state under C:\\ProgramData\\containerd stay)",
			what),
		Do: func(_ context.Context, out io.Writer) error {
			if err := runtimeinstall.Remove(out, r.sys.Runtime, r.layout, rec); err != nil {
				return steps.WithFix(err, fixResetAgain)
			}
			r.runtimeRemoved = true
			return nil
		},
	}}
}

func (r *reset) removeService(_ context.Context, out io.Writer) error {
	err := r.sys.Services.Uninstall(r.o.ServiceName)
	switch {
	case err == nil:
		fmt.Fprintf(out, "stopped and removed service %q\n", r.o.ServiceName)
		return nil
	case errors.Is(err, service.ErrNotInstalled):
		fmt.Fprintf(out, "service %q is not installed\n", r.o.ServiceName)
		return nil
	case errors.Is(err, service.ErrAccessDenied):
		return steps.WithFix(err, steps.FixElevated)
	}
	return err
}

// configStep removes the configuration, only when it was read as one and
// lies inside the node's directories.
func (r *reset) configStep() steps.Step {
	step := steps.Step{Name: "remove the configuration"}
	if !r.loaded {
		ok, err := hostfs.Exists(r.sys.FS, r.o.ConfigFile)
		if err != nil || ok {
			why := fmt.Sprintf("keep %s: it could not be read as a configuration, so it may be any file; look at it and remove it yourself", r.o.ConfigFile)
			step.Description = why
			step.Do = func(_ context.Context, out io.Writer) error {
				fmt.Fprintf(out, "kept %s: it could not be read as a configuration, so it may be any file; look at it and remove it yourself\n", r.o.ConfigFile)
				return r.removeFiles(out, r.configFiles()[1:])
			}
			return step
		}
	}
	step.Description = r.describe(r.configFiles())
	step.Do = func(_ context.Context, out io.Writer) error {
		return r.removeFiles(out, r.configFiles())
	}
	return step
}

// throughLink reports the first directory from the node directory that
// holds p down to p's own directory that is a symbolic link or junction:
// removing through it would remove a file outside the node's
// directories.
func (r *reset) throughLink(p string) (string, error) {
	var top string
	for _, d := range r.layout.NodeDirs() {
		if ospath.Within(r.goos, d, p) {
			top = d
			break
		}
	}
	anc := ospath.Ancestors(r.goos, ospath.Dir(r.goos, p))
	for _, a := range anc {
		info, err := r.sys.FS.Lstat(a)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", err
		case info.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
			return a, nil
		}
		if ospath.Same(r.goos, a, top) {
			break
		}
	}
	return "", nil
}

// removeTrees removes directories of the node with everything in them.
func (r *reset) removeTrees(out io.Writer, dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if link, err := r.throughLink(d); err != nil || link != "" {
			errs = append(errs, linkErr(d, link, err))
			continue
		}
		ok, err := hostfs.Exists(r.sys.FS, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := hostfs.RemoveTree(r.sys.FS, r.goos, d); err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			fmt.Fprintf(out, "removed %s\n", d)
		} else {
			fmt.Fprintf(out, "%s does not exist\n", d)
		}
	}
	if len(errs) > 0 {
		return steps.WithFix(errors.Join(errs...), "close whatever holds the files open (an editor, a `Get-Content -Wait`), "+fixResetAgain)
	}
	return nil
}

func linkErr(p, link string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return fmt.Errorf("%s is reached through %s, a symbolic link or junction, and may lie outside the node's directories: "+
		"reset does not follow it; remove the link, or what it points to, yourself", p, link)
}

func (r *reset) removeFiles(out io.Writer, files []named) error {
	var errs []error
	remove, leave := r.split(files)
	for _, f := range leave {
		fmt.Fprintln(out, r.outsideLine(f))
	}
	for _, f := range remove {
		if link, err := r.throughLink(f); err != nil || link != "" {
			errs = append(errs, linkErr(f, link, err))
			continue
		}
		removed, err := hostfs.RemoveFile(r.sys.FS, f)
		switch {
		case err != nil:
			errs = append(errs, err)
		case removed:
			fmt.Fprintf(out, "removed %s\n", f)
		}
	}
	if len(errs) > 0 {
		return steps.WithFix(errors.Join(errs...), "make sure edgecore is stopped (`edgecore.exe service status`) and nothing else holds the files open, "+fixResetAgain)
	}
	return nil
}

// restoreACLs gives the folders the node restricted back what they had
// (protect.RestoreRecorded), but for the node's own directories, which
// reset empties and removes, and removes the record with it: the folders
// it still names are printed with the command that restores each.
func (r *reset) restoreACLs(_ context.Context, out io.Writer) error {
	var own []protect.Target
	for _, d := range r.layout.NodeDirs() {
		own = append(own, protect.Target{Path: d, Restrict: true})
	}
	restored, err := protect.RestoreRecorded(r.sys.Protect, own)
	for _, x := range restored {
		fmt.Fprintln(out, x)
	}
	if err != nil {
		return steps.WithFix(err, fixResetAgain)
	}
	if len(restored) == 0 {
		fmt.Fprintln(out, "none to give back")
	}
	if _, err := hostfs.RemoveFile(r.sys.FS, r.sys.Protect.Record); err != nil {
		return steps.WithFix(err, fixResetAgain)
	}
	return nil
}

func (r *reset) removeEmptyDirs(_ context.Context, out io.Writer) error {
	var errs []error
	for _, d := range r.emptyDirs() {
		ok, err := hostfs.Exists(r.sys.FS, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		removed, err := hostfs.RemoveIfEmpty(r.sys.FS, d)
		switch {
		case err != nil:
			errs = append(errs, err)
		case removed:
			fmt.Fprintf(out, "removed %s\n", d)
		default:
			fmt.Fprintf(out, "kept %s: it is not empty\n", d)
		}
	}
	if len(errs) > 0 {
		return steps.WithFix(errors.Join(errs...), fixResetAgain)
	}
	return nil
}
