// Package protect is the one description of who may access what on a
// Windows edge host, and the one place that checks and applies it: the
// node's directories (configuration, token, key and certificates, backups
// and the upgrade journal under C:\etc\kubeedge; the database; the
// kubelet's root with its secret volumes, its plugin registration and the
// flexvolume drivers it runs; the kubelet's device plugin sockets; pod
// logs; static pods; edgecore's logs) and the node's files a configuration
// may place elsewhere (the configuration the service runs with and the
// upgrade settings beside it) admit SYSTEM and Administrators only, are
// owned by Administrators and do not inherit C:\'s ACL, under which every
// user may read; the directory of the edgecore.exe the service runs, and
// the file itself, may be changed by no one else. join, `service install`,
// `config` and every node start apply it (Enforce, AtStart); preflight
// reports where the host differs (Audit).
//
// Why owners matter: the owner of a directory may always rewrite its ACL.
// Any user may create folders in C:\, so one who made C:\etc before join
// would keep the power to replace upgrade\journal.json, from which the
// SYSTEM service starts a backed-up binary. Such a directory, or a parent
// of one, is refused, never silently taken over: what its owner put there
// must be looked at first.
//
// Why the parents' ACLs matter: whoever may rename or empty a parent of a
// path (delete it, delete its entries, or grant themselves either) may
// move the real directory away and put one of their own, with their own
// configuration, journal or flexvolume driver, at the path the service
// reads as SYSTEM. On client editions of Windows, C:\ lets Authenticated
// Users modify every folder an administrator creates in it. So every
// parent of every path, up to the drive root, admits that only to SYSTEM,
// Administrators, TrustedInstaller and the elevated account running the
// command, or is refused with the command that fixes it; and the parents
// edgecore creates itself are created with acl.ParentSDDL, the node's own
// directories with acl.DirectorySDDL, so that nothing is ever open to
// others between its creation and its restriction (Create).
//
// Why every entry matters: restricting a folder re-owns and re-permissions
// what is in it, which would erase who put it there. Folders upstream's
// keadm makes inherit C:\'s ACL, under which every user may create files
// in them, so before the node takes such a folder over (join, takeover,
// `service install`, `config`) every entry below it is judged, without
// following links (Audit's walk): one owned by anyone but SYSTEM,
// Administrators or TrustedInstaller (and the elevated account running
// the command), a symbolic link, junction or mount point, or a file with
// more than one name (hard link) is refused with its path and its fix.
// Nothing is re-owned that was not judged first. Which parts of a tree
// are judged when, and why, is Moment's and Target.Workload's comment.
//
// Why Windows' own folders are never restricted: locking other accounts
// out of C:\Program Files\Common Files or C:\Users\Public breaks the host.
// A folder the configuration names must not be one of them (unsafeRoot),
// and when it exists outside the node's layout it must be empty, or made
// by the node, or restricted already (foreignFolder). The owner and DACL a
// folder had before the node changed them are recorded (Host.Record), so
// that undoing the configuration gives them back (RestoreRecorded).
//
// The effects go through Host, so that every decision is tested with a
// recording fake on any build host.
package protect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/durable"
)

// Target is one path the description covers.
type Target struct {
	// What the path holds, for messages.
	What string
	// Field is the configuration field that names the path, "" for a
	// fixed location of the layout.
	Field string
	Path  string
	// Restrict is set for the node's own directories, which get the ACL
	// of acl.DirectorySDDL. The executable's directory is only checked:
	// it may be a directory edgecore shares (C:\Program Files\x), where
	// rewriting the ACL would lock others out; it must only not be
	// changeable by non-administrators.
	Restrict bool
	// File is set for a single file (the configuration, the upgrade
	// settings, the executable): it is restricted, or judged, as it is,
	// and never created as a directory.
	File bool
	// Input is set for what the node reads from outside its own
	// directories and acts on as SYSTEM without owning it (image
	// archives and their folders): it is only checked, like the
	// executable's directory, and a finding's fix is the icacls command
	// that takes the other account's rights away, not a move.
	Input bool
	// Tree is set for an Input directory whose every entry the node runs
	// or acts on as SYSTEM, one by one: containerd's CNI plugin folder
	// (it starts each plugin there as SYSTEM) and its CNI configuration
	// folder (a network there chooses the plugin). Audit then walks it as
	// it walks a restricted directory, and, since nothing restricts it
	// afterwards, also refuses an entry others may change through an
	// entry of its own in its ACL.
	Tree bool
	// Own is set for a restricted directory in the layout's roots
	// (config.Layout.Roots): one that exists is the node's, from an
	// earlier node or from keadm. Any other that exists must be empty,
	// made by the node, or restricted already (foreignFolder).
	Own bool
	// Workload are subtrees below Path, as paths in which * stands for
	// any one name, that workloads write: a pod's volumes (a Windows
	// container's files belong to its virtual account, S-1-5-93-2-x, and
	// a HostProcess pod's to any account), the termination messages its
	// containers write, and the volume plugins' global mounts, which are
	// links to volumes. The node mounts them into the pod they belong to
	// and neither runs nor trusts what is in them, so they are never
	// judged, and never re-owned or re-permissioned: that would erase a
	// workload's ownership, and lock it out of its own files.
	Workload []string
	// Holds are the node's files below Path that a configuration puts
	// there (the configuration and upgrade settings, ConfigFiles): a
	// folder outside the layout that holds only them is the node's to
	// take (foreignFolder).
	Holds []string
	// Later are subtrees below Path judged only when the node adopts a
	// folder (Adopting), or at a start when the root drifted: the
	// kubelet's pod folders and the pod logs the runtime writes, which
	// the node neither runs nor trusts as code, and which on a busy node
	// hold too many entries to read at every start. Once the node has
	// restricted the root no one but SYSTEM and Administrators adds to
	// them.
	Later []string
}

// Moment is when a check runs, which decides how much of each restricted
// directory it judges.
type Moment int

const (
	// Starting is every start of the node (AtStart), with the
	// configuration it runs: a restricted directory whose own ACL is
	// intact is judged whole but for Target.Later, so that every part the
	// node reads, trusts or runs is: the configuration and upgrade
	// settings, the upgrade journal and staged packages, backups, image
	// archives, certificates, static pod manifests, the database with its
	// SQLite -journal and -wal, flexvolume drivers, device plugin and
	// plugin registration sockets, edgecore's logs. A root that drifted
	// (someone else may have added entries) is judged whole, as when
	// Adopting.
	Starting Moment = iota
	// Adopting is when the node takes folders over before it ever ran on
	// them under these rules: join (also over a folder keadm reset or an
	// operator left), takeover, `service install` and `config`, and
	// preflight's report before them. Every entry is judged, but for
	// Target.Workload, and every restricted directory is restricted.
	Adopting
)

// Bounds of one directory's walk: a tree deeper or larger is refused, with
// the path, rather than read for minutes at every start.
const (
	MaxEntries = 100000
	MaxDepth   = 32
)

// ConfigFiles are the targets of the files the service reads beside its
// configuration, restricted wherever they lie: config, the configuration
// it runs with, which holds the join token until the certificates are
// issued, and settings, the upgrade settings beside it
// (upgrade.SettingsPath of config), which name where the binaries that
// run as SYSTEM come from. The caller passes settings because package
// upgrade may itself rely on this one. An empty path is left out; a file
// inside a restricted directory is covered by it (Targets).
func ConfigFiles(config, settings string) []Target {
	var out []Target
	if config != "" {
		out = append(out, Target{What: "the configuration the service runs with, which holds the join token until the certificates are issued",
			Path: config, Restrict: true, File: true})
	}
	if settings != "" {
		out = append(out, Target{What: "the upgrade settings, which name where the binaries that run as SYSTEM come from",
			Path: settings, Restrict: true, File: true})
	}
	return out
}

// Targets lists the paths of the description for a node configured by c
// on the host of layout l, running the executable exe ("" when no service
// runs one yet), with files (ConfigFiles) where the caller knows them. A
// path inside a restricted directory is left out: restricting the outer
// one covers it. Outside Windows there are no targets: file modes protect
// those hosts, and these are Windows ACLs.
//
// A restricted directory that is a drive root, one of Windows' own or
// below one, or on another computer is refused with the field and the fix
// (unsafeRoot): restricting it to administrators would break the host.
func Targets(c *v1alpha2.EdgeCoreConfig, l config.Layout, exe string, files ...Target) ([]Target, error) {
	goos := l.GOOS
	if goos != config.Windows {
		return nil, nil
	}
	var out []Target
	var errs []error
	add := func(t Target) {
		if t.Restrict && !t.File {
			if why := unsafeRoot(l, t.Path); why != "" {
				name, fix := t.Field, "give "+t.Field
				if name == "" {
					name, fix = t.What, "choose"
				}
				errs = append(errs, fmt.Errorf("%s: %s is %s, which edgecore would restrict to SYSTEM and Administrators; "+
					"fix: %s a directory of the node's own, such as one under %s", name, t.Path, why, fix, ospath.Dir(goos, l.KubeletRootDir)))
				return
			}
			for _, r := range l.Roots() {
				t.Own = t.Own || ospath.Within(goos, r, t.Path)
			}
		}
		for i, have := range out {
			if have.Restrict && t.Restrict && ospath.Within(goos, have.Path, t.Path) {
				if t.File {
					out[i].Holds = append(out[i].Holds, t.Path)
				}
				return
			}
		}
		// A wider directory named later replaces the narrower ones.
		kept := out[:0]
		for _, have := range out {
			if !(have.Restrict && t.Restrict && ospath.Within(goos, t.Path, have.Path)) {
				kept = append(kept, have)
			}
		}
		out = append(kept, t)
	}
	add(Target{What: "the configuration, join token, node key and certificates, backups and upgrade journal", Path: l.KubeEdgeDir, Restrict: true})
	if c != nil {
		for _, d := range config.Directories(c, goos) {
			add(Target{What: "the directory of " + d.Field, Field: d.Field, Path: d.Path, Restrict: true})
		}
		// The kubelet keeps its plugin registration (plugins,
		// plugins_registry) in its root, but serves device plugins in a
		// place of its own, whatever rootDirectory says.
		if e := c.Modules; e != nil && e.Edged != nil && e.Edged.Enable {
			add(Target{What: "the kubelet's device plugin sockets, which choose the devices and mounts containers get", Path: l.DevicePluginDir, Restrict: true})
		}
	}
	add(Target{What: "edgecore's logs, panic log and stack dumps", Path: l.LogDir, Restrict: true})
	for _, f := range files {
		add(f)
	}
	if exe != "" {
		add(Target{What: "the directory of the edgecore.exe the service runs", Path: ospath.Dir(goos, exe)})
		add(Target{What: "the edgecore.exe the service runs", Path: exe, File: true})
	}
	workload, later := subtrees(c, goos)
	for i, t := range out {
		if !t.Restrict || t.File {
			continue
		}
		for _, w := range workload {
			if ospath.Within(goos, t.Path, w) {
				out[i].Workload = append(out[i].Workload, w)
			}
		}
		for _, w := range later {
			if ospath.Within(goos, t.Path, w) {
				out[i].Later = append(out[i].Later, w)
			}
		}
	}
	return out, errors.Join(errs...)
}

// subtrees are the Workload and Later paths of a node configured by c.
func subtrees(c *v1alpha2.EdgeCoreConfig, goos string) (workload, later []string) {
	if c == nil || c.Modules == nil || c.Modules.Edged == nil || !c.Modules.Edged.Enable {
		return nil, nil
	}
	e := c.Modules.Edged
	if root := e.RootDirectory; root != "" {
		pods := ospath.Join(goos, root, "pods")
		for _, d := range []string{"volumes", "volume-subpaths", "containers"} {
			workload = append(workload, ospath.Join(goos, pods, "*", d))
		}
		// CSI's staging mounts and their vol_data.json, per volume.
		workload = append(workload, ospath.Join(goos, root, "plugins", "kubernetes.io"))
		later = append(later, pods)
	}
	if k := e.TailoredKubeletConfig; k != nil && k.PodLogsDir != "" {
		later = append(later, k.PodLogsDir)
	}
	return workload, later
}

// matches reports whether p is the path pattern names, in which a name *
// stands for any one name.
func matches(goos, pattern, p string) bool {
	a := strings.Split(ospath.Key(goos, pattern), ospath.Separator(goos))
	b := strings.Split(ospath.Key(goos, p), ospath.Separator(goos))
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != "*" && a[i] != b[i] {
			return false
		}
	}
	return true
}

// matchesAny reports whether p is one of patterns.
func matchesAny(goos string, patterns []string, p string) bool {
	for _, w := range patterns {
		if matches(goos, w, p) {
			return true
		}
	}
	return false
}

// windowsDirs are the top-level directories of a Windows volume that hold
// what every account uses.
var windowsDirs = []string{"Windows", "Program Files", "Program Files (x86)", "ProgramData", "Users"}

// unsafeRoot says why restricting p would break the host, or "". p is
// judged in ospath's one form of a Windows path, so C:\Windows.\System32,
// C:\Windows \System32 and \\?\C:\Windows\System32 are all Windows' own.
// A path with a name that form cannot settle without the disk (an 8.3
// short name such as WINDOW~1, a stream, a device path) is refused as
// well: it may stand for one of Windows' folders.
//
// Refused: a drive root; \Windows on any drive and what is below it;
// exactly \Program Files, \Program Files (x86), \ProgramData and \Users
// on any drive; and, where this host keeps them (l.Windows), everything
// below %SystemRoot%, %ProgramFiles%, %ProgramFiles(x86)%,
// %ProgramData%\Microsoft and the user profiles (C:\Users\Default,
// Public and every account's). A UNC path (\\server\share,
// \\localhost\ADMIN$, \\?\UNC\...) is another computer's folder, or this
// one's through an administrative share: SYSTEM would authenticate there
// as the computer, and the ACL would be that computer's.
func unsafeRoot(l config.Layout, p string) string {
	goos := l.GOOS
	if name, why, _ := ospath.BadName(goos, p); name != "" {
		return fmt.Sprintf("a path through %q, which may stand for a directory of Windows (%s)", name, why)
	}
	clean := ospath.Clean(goos, p)
	if strings.HasPrefix(clean, `\\`) {
		return "a folder on a file share or an administrative share (" + clean + "), not on a drive of this computer"
	}
	anc := ospath.Ancestors(goos, clean)
	if len(anc) < 2 {
		return "the root of a drive"
	}
	top := anc[len(anc)-2] // the directory just below the drive root
	for _, w := range windowsDirs {
		name := ospath.Join(goos, anc[len(anc)-1], w)
		if ospath.Same(goos, top, name) && (len(anc) == 2 || w == "Windows") {
			return "a directory of Windows (" + name + ")"
		}
	}
	w := l.Windows
	for _, d := range []struct{ dir, what string }{
		{w.SystemRoot, "Windows"},
		{w.ProgramFiles, "the programs of every account"},
		{w.ProgramFilesX86, "the programs of every account"},
		{ospath.Join(goos, w.ProgramData, "Microsoft"), "Windows' machine-wide data (machine keys, Defender)"},
		{w.ProgramData, "the data of every program"},
		{w.Profiles, "the user profiles"},
	} {
		if d.dir == "" || !ospath.Within(goos, d.dir, clean) {
			continue
		}
		if d.dir == w.ProgramData && !ospath.Same(goos, d.dir, clean) {
			// A folder of a program of its own below ProgramData
			// (C:\ProgramData\containerd) is no folder of Windows.
			continue
		}
		if ospath.Same(goos, d.dir, clean) {
			return fmt.Sprintf("%s, which holds %s", d.dir, d.what)
		}
		return fmt.Sprintf("a folder below %s, which holds %s", d.dir, d.what)
	}
	return ""
}

// Host is what the checks read and change.
type Host struct {
	// Read returns a path's owner and DACL (acl.Read); an error wrapping
	// fs.ErrNotExist for a missing one.
	Read func(path string) (acl.Security, error)
	// List returns the entries of a directory, each read from itself and
	// never through a link: owner and DACL, hard links, reparse point
	// (acl.List).
	List func(dir string) ([]acl.Entry, error)
	// Restrict gives a tree the owner and DACL of acl.DirectorySDDL
	// (acl.ApplyTree), leaving alone the entries below the root that
	// leave reports, and what is below them.
	Restrict func(root string, leave func(path string) bool) error
	// Exists reports whether a path exists.
	Exists func(path string) (bool, error)
	// Mkdir creates one directory whose parent exists, with the owner
	// and DACL of an SDDL string from its first moment, or what it
	// inherits for "" (acl.Mkdir).
	Mkdir func(path, sddl string) error
	// CreateFile creates a new file, failing when one exists, that only
	// SYSTEM and Administrators may open from its first byte
	// (acl.CreateFile with acl.FileSDDL): for a secret written outside
	// the node's restricted folders.
	CreateFile func(path string) (*os.File, error)
	// SDDL reads a path's owner and DACL as one SDDL string, and SetSDDL
	// puts such a string back (acl.ReadSDDL, acl.SetSDDL): what Record
	// keeps of a folder the node restricted.
	SDDL    func(path string) (string, error)
	SetSDDL func(path, sddl string) error
	// ReadFile reads a file, and WriteFile replaces one with a file only
	// SYSTEM and Administrators may open from its first byte: Record.
	ReadFile  func(path string) ([]byte, error)
	WriteFile func(path string, data []byte) error
	// Record is the file (config.Layout.ACLRecord) that keeps the owner
	// and DACL of each folder that existed before the node restricted it,
	// and the folders the node made outside its layout; "" keeps none.
	Record string
	// Self is the SID of the account running the command when it runs
	// elevated: an administrator, who may own what they created.
	Self string
}

// Finding is a path that does not match the description.
type Finding struct {
	Target  Target
	Path    string
	Problem string
	Fix     string
	// Refuse is set when the path is owned by someone who is not an
	// administrator, or may be changed by one: it may hold what that
	// account put there, so it is not repaired but refused.
	Refuse bool
}

func (f Finding) String() string {
	return fmt.Sprintf("%s (%s) %s; fix: %s", f.Path, f.Target.What, f.Problem, f.Fix)
}

// Fixes for the findings.

// fixParent takes away the rights of trustee that let it rename or empty
// the parent p. Its inherited entries are made its own first, since an
// inherited entry cannot be removed, and so that nothing else changes;
// its children inherit the change, as the node's own directories do not.
func fixParent(p, trustee string) string {
	sid, who := acl.SID(trustee), ""
	if name := acl.TrusteeName(trustee); name != trustee && name != sid {
		who = " (" + name + ")"
	}
	return fmt.Sprintf("in PowerShell started with \"Run as administrator\", run `icacls \"%s\" /inheritance:d` and then "+
		"`icacls \"%s\" /remove:g *%s`%s, check that nothing in %s was put there by another account, and run the command again",
		p, p, sid, who, p)
}

func fixOwner(p string) string {
	return fmt.Sprintf("check that nothing in %s was put there by another account, then make Administrators its owner with "+
		"`takeown /F \"%s\" /A` in PowerShell started with \"Run as administrator\" (or remove it), and run the command again", p, p)
}

// fixExe says where to put the executable, and why: the service runs
// that file as SYSTEM at every start, so whoever may change it, or move
// a directory above it, chooses what runs as SYSTEM.
func fixExe(exe string) string {
	return fmt.Sprintf("copy edgecore.exe into a directory only administrators may change, such as C:\\Program Files\\edgecore "+
		"or C:\\etc\\kubeedge\\bin, and run the command from there instead of from %s: the service runs that file as SYSTEM "+
		"at every start, so whoever may change it or rename a directory above it decides what runs as SYSTEM", ospath.Dir(config.Windows, exe))
}

const fixRestrict = "run `edgecore.exe join`, `edgecore.exe service install` or restart the edgecore service, which restrict it, from an elevated prompt"

// Audit compares the host with the description at moment m, changing
// nothing. Paths that do not exist yet are skipped: whoever creates them
// restricts them. The existing parents of every path are judged up to,
// not including, the drive root (judgeParent); a restricted directory
// outside the layout's roots must be the node's (foreignFolder); and the
// entries below every restricted directory are judged as m says (walk).
// Errors reading a path are returned joined, after the findings of the
// paths that could be read.
func Audit(targets []Target, h Host, m Moment) ([]Finding, error) {
	var out []Finding
	var errs []error
	seenParent := map[string]bool{}
	rec, err := readRecord(h)
	if err != nil {
		errs = append(errs, err)
	}
	for _, t := range targets {
		// The parents come first, and count even before the target
		// exists: whoever owns C:\etc may read what join is about to
		// write into C:\etc\kubeedge, and whoever may rename it may put
		// another in its place.
		for _, p := range parents(t.Path) {
			key := ospath.Key(config.Windows, p)
			if seenParent[key] {
				continue
			}
			seenParent[key] = true
			ok, err := h.Exists(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue
			}
			sec, err := h.Read(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, judgeParent(t, p, sec, h.Self)...)
		}
		ok, err := h.Exists(t.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		sec, err := h.Read(t.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		root := judge(t, sec, h.Self)
		out = append(out, root...)
		if !(t.Restrict || t.Input && t.Tree) || t.File || refused(root) {
			// A root another account owns is refused whole: its fix
			// says to look at everything in it.
			continue
		}
		if t.Input {
			found, err := walk(t, h, Adopting)
			out = append(out, found...)
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !t.Own {
			f, err := foreignFolder(t, sec, h, rec)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if f != nil {
				out = append(out, *f)
				continue
			}
		}
		scope := m
		if len(sec.Drift()) > 0 {
			// Others may have added entries anywhere below it.
			scope = Adopting
		}
		if scope == Starting && matchesAny(config.Windows, t.Later, t.Path) {
			continue
		}
		found, err := walk(t, h, scope)
		out = append(out, found...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// refused reports whether any of findings is refused.
func refused(findings []Finding) bool {
	for _, f := range findings {
		if f.Refuse {
			return true
		}
	}
	return false
}

// foreignFolder judges a restricted directory t outside the layout's roots
// that exists: restricting a folder the node did not make locks out
// whatever uses it, which may be another program or Windows itself under
// a name unsafeRoot does not know. It is the node's when the node made it
// (Record names it, with the same identity: a folder removed and made
// again by someone else is not), when its ACL is already the node's (an
// earlier node restricted it, or only an administrator could have given
// it that), or when it is empty but for the node's own files (t.Holds:
// the configuration and upgrade settings, which the walk judges).
func foreignFolder(t Target, sec acl.Security, h Host, rec record) (*Finding, error) {
	if len(sec.Drift()) == 0 {
		return nil, nil
	}
	if id, ok := rec.made(t.Path); ok {
		cur, err := identity(h, t.Path)
		if err != nil {
			return nil, err
		}
		if cur == id {
			return nil, nil
		}
	}
	all, err := list(h, t.Path)
	if err != nil {
		return nil, err
	}
	var entries []acl.Entry
	for _, e := range all {
		own := false
		for _, f := range t.Holds {
			own = own || ospath.Same(config.Windows, f, ospath.Join(config.Windows, t.Path, e.Name))
		}
		if !own {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return nil, nil
	}
	what := "give " + t.Field + " a new folder or an empty one"
	if t.Field == "" {
		what = "choose a new folder or an empty one"
	}
	return &Finding{Target: t, Path: t.Path, Refuse: true,
		Problem: fmt.Sprintf("is a folder that existed before edgecore, which did not make it, and holds %d entries (%s first): "+
			"restricting it to SYSTEM and Administrators would lock out whatever else uses it", len(entries), entries[0].Name),
		Fix: what + ", which edgecore makes or takes with the node's rights; if this folder was the node's, " +
			"move what you need out of it and empty it, then run the command again"}, nil
}

// list is h.List, or an error naming what is missing.
func list(h Host, dir string) ([]acl.Entry, error) {
	if h.List == nil {
		return nil, fmt.Errorf("reading the entries of %s: this host cannot list a directory's entries with their owners", dir)
	}
	return h.List(dir)
}

// identity is the identity of the existing directory p (acl.Entry.ID),
// read from its parent's list.
func identity(h Host, p string) (string, error) {
	goos := config.Windows
	parent := ospath.Dir(goos, p)
	entries, err := list(h, parent)
	if err != nil {
		return "", err
	}
	base := strings.TrimPrefix(p[len(parent):], `\`)
	for _, e := range entries {
		if strings.EqualFold(e.Name, base) {
			return e.ID, nil
		}
	}
	return "", fmt.Errorf("%s is not among the entries of %s", base, parent)
}

// walk judges the entries below the restricted directory t at moment m,
// without following links, depth first, and bounded: every entry but
// those in t.Workload, and at Starting those in t.Later (Moment says
// why). A directory that is refused is not entered: its fix is to look
// at all of it.
func walk(t Target, h Host, m Moment) ([]Finding, error) {
	w := walker{t: t, h: h, m: m}
	w.t.What = "in " + t.Path + ", " + t.What
	err := w.dir(t.Path, 1)
	return w.out, err
}

type walker struct {
	t   Target
	h   Host
	m   Moment
	n   int
	out []Finding
	// over is set once a bound was passed: the walk stops there.
	over bool
}

func (w *walker) dir(dir string, depth int) error {
	goos := config.Windows
	entries, err := list(w.h, dir)
	if err != nil {
		return fmt.Errorf("judging what is in %s: %w", w.t.Path, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for _, e := range entries {
		w.n++
		if w.n > MaxEntries {
			w.bound(dir, fmt.Sprintf("holds more than %d entries below it", MaxEntries))
			return nil
		}
		p := ospath.Join(goos, dir, e.Name)
		if matchesAny(goos, w.t.Workload, p) || (w.m == Starting && matchesAny(goos, w.t.Later, p)) {
			continue
		}
		if f := judgeEntry(w.t, p, e, w.h.Self); f != nil {
			w.out = append(w.out, *f)
			continue
		}
		if w.t.Input {
			// Nothing restricts an Input tree after the walk: an entry
			// others may change is theirs to replace later.
			if f := judgeWriters(w.t, p, e, w.h.Self); f != nil {
				w.out = append(w.out, *f)
				continue
			}
		}
		if !e.Dir {
			continue
		}
		if depth >= MaxDepth {
			w.bound(p, fmt.Sprintf("has folders more than %d levels below %s", MaxDepth, w.t.Path))
			return nil
		}
		if err := w.dir(p, depth+1); err != nil || w.over {
			return err
		}
	}
	return nil
}

// bound refuses the walk's root once a bound is passed.
func (w *walker) bound(p, problem string) {
	w.over = true
	w.out = append(w.out, Finding{Target: w.t, Path: p, Refuse: true, Problem: problem,
		Fix: fmt.Sprintf("edgecore judges every entry of the node's folders before it trusts them, and stops at %d entries or %d levels; "+
			"remove from %s what does not belong to the node, then run the command again", MaxEntries, MaxDepth, w.t.Path)})
}

// judgeEntry refuses an entry p below a restricted directory that is a
// link (the service would follow it to wherever it points), that another
// account owns (it may have put it there, with the content of its
// choice), or that is a file with more than one name (whoever may change
// it through another name, in a folder that is not the node's, changes
// what the service reads or runs here, and restricting it here would
// change it there): nothing below the node's folders is taken over
// without being judged.
func judgeEntry(t Target, p string, e acl.Entry, self string) *Finding {
	switch {
	case e.IsLink():
		return &Finding{Target: t, Path: p, Refuse: true,
			Problem: "is " + e.LinkKind() + ", which the service would follow, as SYSTEM, to wherever it points",
			Fix:     fixLink(p, e.Dir)}
	case !acl.Trusted(e.Security.Owner, self):
		return &Finding{Target: t, Path: p, Refuse: true,
			Problem: "is owned by " + acl.TrusteeName(e.Security.Owner) + ", who may have put it there, with what it holds, for the service to read or run as SYSTEM",
			Fix:     fixEntryOwner(p, e.Dir)}
	case !e.Dir && e.Links > 1:
		return &Finding{Target: t, Path: p, Refuse: true,
			Problem: fmt.Sprintf("is a file with %d names (hard links): whoever may change it under another name changes what the service reads or runs here", e.Links),
			Fix:     fixHardLink(p)}
	}
	return nil
}

// judgeWriters refuses an entry p of an Input tree whose own ACL lets an
// account other than SYSTEM, Administrators, TrustedInstaller and self
// change it: a plugin anyone may overwrite runs as SYSTEM with what they
// wrote. What it inherits from the tree's root, judged already, passes.
func judgeWriters(t Target, p string, e acl.Entry, self string) *Finding {
	for _, g := range e.Security.Others(self) {
		if g.Write {
			return &Finding{Target: t, Path: p, Refuse: true,
				Problem: "may be changed by others: " + g.String() + ", who may put what the service then runs or reads as SYSTEM",
				Fix:     fixParent(p, g.Trustee)}
		}
	}
	return nil
}

func fixLink(p string, dir bool) string {
	rm := fmt.Sprintf("`cmd /c del \"%s\"`", p)
	if dir {
		rm = fmt.Sprintf("`cmd /c rmdir \"%s\"`", p)
	}
	return fmt.Sprintf("in PowerShell started with \"Run as administrator\", look at where it points (`Get-Item -LiteralPath \"%s\" | Format-List Target`), "+
		"remove the link itself with %s, which leaves what it points to alone, put a real folder or file there if the node needs one, and run the command again", p, rm)
}

func fixEntryOwner(p string, dir bool) string {
	take := fmt.Sprintf("`takeown /F \"%s\" /A`", p)
	if dir {
		take = fmt.Sprintf("`takeown /F \"%s\" /A /R /D Y`", p)
	}
	return fmt.Sprintf("look at what it holds: another account put it there. Delete it unless you know it is the node's; if it is, make Administrators its owner "+
		"with %s in PowerShell started with \"Run as administrator\", and run the command again", take)
}

func fixHardLink(p string) string {
	return fmt.Sprintf("list its other names with `fsutil hardlink list \"%s\"` in PowerShell started with \"Run as administrator\", "+
		"then replace it with a copy of its own (`Copy-Item -LiteralPath \"%s\" \"%s.copy\"`, delete it, rename the copy back) or delete it, "+
		"and run the command again", p, p, p)
}

// parents are the directories above p, nearest first, without the drive
// root: it cannot be renamed, and Windows grants users no right to remove
// what is in it.
func parents(p string) []string {
	anc := ospath.Ancestors(config.Windows, p)
	if len(anc) < 3 {
		return nil
	}
	return anc[1 : len(anc)-1]
}

// judgeParent refuses a parent p of target t that an account other than
// SYSTEM, Administrators, TrustedInstaller and self owns, or may delete,
// rename or empty (acl.Security.Removable): renaming it away and creating
// one of the same name puts their files, or their edgecore.exe, where the
// service, which runs as SYSTEM, reads or starts them. The same rule holds
// for the parents of every target. Under Wine a directory's DACL is made
// up from its Unix mode (the owner, SYSTEM, and Everyone for the "other"
// bits), so a checkout in directories of mode 0755, such as the build
// output Z:\...\_output\windows-amd64 the Wine tests install from, passes,
// and one under a world-writable directory (/tmp, 1777: Wine ignores the
// sticky bit) is refused as it would be on Windows.
func judgeParent(t Target, p string, sec acl.Security, self string) []Finding {
	if !acl.Trusted(sec.Owner, self) {
		// Its owner may grant itself anything: what else the DACL
		// allows is the next question, once Administrators own it.
		return []Finding{{Target: t, Path: p, Refuse: true,
			Problem: "is a parent owned by " + acl.TrusteeName(sec.Owner) + ", who may replace what is below it",
			Fix:     fixOwner(p)}}
	}
	var out []Finding
	for _, g := range sec.Removable(self) {
		f := Finding{Target: t, Path: p, Refuse: true,
			Problem: "is a parent that others may rename or empty: " + acl.TrusteeName(g.Trustee) + " has " + g.Rights +
				", enough to move it away and put a folder of their own, with their files, at the paths the service reads as SYSTEM",
			Fix: fixParent(p, g.Trustee)}
		if !t.Restrict && !t.Input {
			f.Problem = "is a parent that others may rename or empty: " + acl.TrusteeName(g.Trustee) + " has " + g.Rights +
				", enough to move it away and put another edgecore.exe at the service's path"
			f.Fix = fixExe(t.Path)
		}
		out = append(out, f)
	}
	return out
}

// judge compares one target with the description.
func judge(t Target, sec acl.Security, self string) []Finding {
	if !acl.Trusted(sec.Owner, self) {
		fix := fixOwner(t.Path)
		if !t.Restrict && !t.Input {
			fix = fixExe(t.Path)
		}
		return []Finding{{Target: t, Path: t.Path, Refuse: true, Problem: "is owned by " + acl.TrusteeName(sec.Owner), Fix: fix}}
	}
	if !t.Restrict {
		var out []Finding
		for _, g := range sec.Others(self) {
			if g.Write {
				fix := fixExe(t.Path)
				if t.Input {
					fix = fixParent(t.Path, g.Trustee)
				}
				out = append(out, Finding{Target: t, Path: t.Path, Refuse: true, Problem: "is writable by others: " + g.String(), Fix: fix})
			}
		}
		return out
	}
	if d := sec.Drift(); len(d) > 0 {
		return []Finding{{Target: t, Path: t.Path, Problem: "differs: " + strings.Join(d, ", "), Fix: fixRestrict}}
	}
	return nil
}

// RefusedError lists the findings Enforce will not repair.
type RefusedError struct{ Findings []Finding }

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("the node's files are not protected from other accounts, and edgecore will not take them over:")
	for _, f := range e.Findings {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	return b.String()
}

// Refused is a *RefusedError of the findings that are refused, or nil
// when there are none: what a command checks before it changes anything.
func Refused(findings []Finding) error {
	var refused []Finding
	for _, f := range findings {
		if f.Refuse {
			refused = append(refused, f)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return &RefusedError{Findings: refused}
}

// Check audits the targets at moment m and refuses what Enforce would not
// repair: what a command checks before it changes anything.
func Check(targets []Target, h Host, m Moment) error {
	findings, err := Audit(targets, h, m)
	if err != nil {
		return err
	}
	return Refused(findings)
}

// Repair is what Enforce changed on one directory.
type Repair struct {
	Path string
	// Was is how it differed from the description; "" when it did not
	// and Enforce restricted it because it was told to always.
	Was string
	// NotKept is set when reading it back after the change still shows a
	// difference: the volume keeps no ACLs (FAT), or Wine, which accepts
	// ACLs without storing them.
	NotKept string
}

func (r Repair) String() string {
	s := r.Path + ": SYSTEM and Administrators only, owned by Administrators"
	if r.Was != "" {
		s += " (before: " + r.Was + ")"
	}
	if r.NotKept != "" {
		s += "; reading it back still shows " + r.NotKept + ": the volume does not keep Windows ACLs"
	}
	return s
}

// Enforce applies the description at moment m: first every path is
// audited, and if any is refused nothing is changed and a *RefusedError
// names each with its fix; otherwise each restricted directory that
// differs is restricted again, with everything below it but its
// Target.Workload, and reported. Adopting restricts (and reports) every
// restricted directory, differing or not, as join does after creating
// them: a file below an intact root may carry an ACE of its own. A folder
// that existed before the node and was not made by it has its owner and
// DACL recorded first (Host.Record), for RestoreRecorded; one outside the
// layout's roots is recorded as the node's once restricted.
func Enforce(targets []Target, h Host, m Moment) ([]Repair, error) {
	findings, err := Audit(targets, h, m)
	if err != nil {
		return nil, err
	}
	if err := Refused(findings); err != nil {
		return nil, err
	}
	drift := map[string]string{}
	for _, f := range findings {
		drift[f.Path] = f.Problem
	}
	var repairs []Repair
	for _, t := range targets {
		was, differs := drift[t.Path]
		if !t.Restrict || !(differs || m == Adopting) {
			continue
		}
		if ok, err := h.Exists(t.Path); err != nil || !ok {
			// Audit skipped it too: it does not exist yet.
			continue
		}
		if differs && !t.File {
			if err := remember(h, t); err != nil {
				return repairs, err
			}
		}
		goos := config.Windows
		leave := func(p string) bool { return matchesAny(goos, t.Workload, p) }
		if err := h.Restrict(t.Path, leave); err != nil {
			kind := "a directory"
			if t.File {
				kind = "a file"
			}
			return repairs, fmt.Errorf("restricting %s (%s) to SYSTEM and Administrators: %w; fix: make sure it is %s on an NTFS volume, not a link, and that the command runs elevated",
				t.Path, t.What, err, kind)
		}
		if !t.Own && !t.File && h.Record != "" {
			// Taken over, the folder is the node's from now on, as one
			// it made is, whatever it holds later and whatever a volume
			// that keeps no ACLs reads back.
			if err := markMade(h, t.Path); err != nil {
				return repairs, err
			}
		}
		r := Repair{Path: t.Path, Was: was}
		if sec, err := h.Read(t.Path); err == nil {
			r.NotKept = strings.Join(sec.Drift(), ", ")
		}
		repairs = append(repairs, r)
	}
	return repairs, nil
}

// Restricted are the paths of the targets restricted to SYSTEM and
// Administrators: C:\etc\kubeedge (configuration, key, certificates,
// backups), the database's, the kubelet's root with its secret volumes,
// pod logs and edgecore's logs.
func Restricted(targets []Target) []string {
	var dirs []string
	for _, t := range targets {
		if t.Restrict {
			dirs = append(dirs, t.Path)
		}
	}
	return dirs
}

// EnforceAll is Enforce Adopting: every restricted directory is judged
// whole and restricted, drifted or not (join and takeover: a file copied
// in before may carry an ACE of its own), each repair printed to out.
func EnforceAll(targets []Target, h Host, out io.Writer) error {
	repairs, err := Enforce(targets, h, Adopting)
	for _, r := range repairs {
		fmt.Fprintln(out, r)
	}
	return err
}

// HostACLs are this host's ACLs, trusting the account running this
// process when it runs elevated. Record is left for the caller, who
// knows the layout.
func HostACLs() Host {
	self, _ := acl.Self()
	return Host{
		Read: acl.Read,
		List: acl.List,
		Restrict: func(root string, leave func(string) bool) error {
			return acl.ApplyTree(root, acl.DirectorySDDL, leave)
		},
		Exists: func(path string) (bool, error) {
			// Lstat: a link is there, and the ACL code refuses it.
			_, err := os.Lstat(path)
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return err == nil, err
		},
		Mkdir:      acl.Mkdir,
		CreateFile: func(path string) (*os.File, error) { return acl.CreateFile(path, acl.FileSDDL) },
		SDDL:       acl.ReadSDDL,
		SetSDDL:    acl.SetSDDL,
		ReadFile:   os.ReadFile,
		WriteFile:  writePrivate,
		Self:       self,
	}
}

// writePrivate replaces path with data through a file beside it that
// only SYSTEM and Administrators may open from its first byte, flushed
// and renamed into place.
func writePrivate(path string, data []byte) error {
	tmp := path + ".new"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := acl.CreateFile(tmp, acl.FileSDDL)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = durable.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Descriptor is the owner and DACL (SDDL) the directory p gets when
// edgecore creates it among targets: a restricted directory of the node
// gets acl.DirectorySDDL, a directory inside one inherits it (""), and any
// other, a parent of the node's directories such as C:\etc or C:\var,
// gets acl.ParentSDDL, which no other account may rename or empty, where
// C:\'s ACL would let Authenticated Users modify it on client editions.
func Descriptor(goos string, targets []Target, p string) string {
	for _, t := range targets {
		if !t.Restrict || t.File || !ospath.Within(goos, t.Path, p) {
			continue
		}
		if ospath.Same(goos, t.Path, p) {
			return acl.DirectorySDDL
		}
		return ""
	}
	return acl.ParentSDDL
}

// Create makes dir and those of its parents that are missing, parents
// first, each with its Descriptor from its first moment, and returns the
// ones it made, also when it fails part way (for an undo). A directory
// that exists, or appears meanwhile, is left as it is: Audit judges it.
// A restricted directory it makes outside the layout's roots is recorded
// as the node's (Host.Record), with its identity, so that a later start
// knows it is (foreignFolder) and never records its ACL as one to give
// back (remember). Inside the roots every folder is the node's anyway, and
// a join rolled back over a kubeedge directory that existed leaves no
// record behind.
// Outside Windows there are no targets and Mkdir applies no descriptor.
func Create(goos string, targets []Target, dir string, h Host) ([]string, error) {
	var missing []string
	for _, a := range ospath.Ancestors(goos, dir) {
		ok, err := h.Exists(a)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		missing = append(missing, a)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		err := h.Mkdir(p, Descriptor(goos, targets, p))
		switch {
		case errors.Is(err, fs.ErrExist):
			continue
		case err != nil:
			return made, fmt.Errorf("create %s: %w", p, err)
		}
		made = append(made, p)
	}
	if goos != config.Windows || h.Record == "" {
		return made, nil
	}
	for _, p := range made {
		for _, t := range targets {
			if t.Restrict && !t.File && !t.Own && ospath.Same(goos, t.Path, p) {
				if err := markMade(h, p); err != nil {
					return made, err
				}
			}
		}
	}
	return made, nil
}

// AtStart is what every node start applies, before the modules start:
// the node's directories and files are enforced (drift repaired, or
// refused as Enforce does, Starting), and the executable's directory and
// file, which a running service cannot move, are audited apart, so that a
// finding there does not keep the data directories from being repaired.
// It returns the repairs, and an error when anything is refused (a
// *RefusedError naming each path with its fix) or cannot be read or
// restricted: the caller decides what that stops (internal/node: the
// service does not start).
func AtStart(targets []Target, h Host) ([]Repair, error) {
	var dirs, rest []Target
	for _, t := range targets {
		if t.Restrict {
			dirs = append(dirs, t)
		} else {
			rest = append(rest, t)
		}
	}
	repairs, err := Enforce(dirs, h, Starting)
	var refused []Finding
	var r *RefusedError
	if errors.As(err, &r) {
		refused, err = r.Findings, nil
	}
	exe, aerr := Audit(rest, h, Starting)
	for _, f := range exe {
		if f.Refuse {
			refused = append(refused, f)
		}
	}
	if len(refused) > 0 {
		err = errors.Join(&RefusedError{Findings: refused}, err)
	}
	return repairs, errors.Join(err, aerr)
}

// CheckFile judges a settings file the node reads and acts on as SYSTEM
// when it reads it, as Input: SYSTEM, Administrators or TrustedInstaller
// (or the elevated account running the command) own it, its folder and
// every folder above them, no other account may change the file or its
// folder, or rename a folder above. The refusal names the path and the
// command that fixes it. what says what the file is, for messages.
func CheckFile(goos string, h Host, what, path string) error {
	if goos != config.Windows {
		return nil
	}
	return Check([]Target{
		{What: "the folder of " + what, Path: ospath.Dir(goos, path), Input: true},
		{What: what, Path: path, File: true, Input: true},
	}, h, Starting)
}
