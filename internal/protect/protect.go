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
// The effects go through Host, so that every decision is tested with a
// recording fake on any build host.
package protect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/acl"
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
}

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
// A directory the configuration names that is a drive root or one of
// Windows' own is refused with the field and the fix: restricting it to
// administrators would break the host.
func Targets(c *v1alpha2.EdgeCoreConfig, l config.Layout, exe string, files ...Target) ([]Target, error) {
	goos := l.GOOS
	if goos != config.Windows {
		return nil, nil
	}
	var out []Target
	add := func(t Target) {
		for _, have := range out {
			if have.Restrict && t.Restrict && ospath.Within(goos, have.Path, t.Path) {
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
	var errs []error
	if c != nil {
		for _, d := range config.Directories(c, goos) {
			if why := unsafeRoot(goos, d.Path); why != "" {
				errs = append(errs, fmt.Errorf("%s: %s is %s, which edgecore would restrict to SYSTEM and Administrators; "+
					"fix: give %s a directory of the node's own, such as one under %s", d.Field, d.Path, why, d.Field, ospath.Dir(goos, l.KubeletRootDir)))
				continue
			}
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
	return out, errors.Join(errs...)
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
func unsafeRoot(goos, p string) string {
	if name, why, _ := ospath.BadName(goos, p); name != "" {
		return fmt.Sprintf("a path through %q, which may stand for a directory of Windows (%s)", name, why)
	}
	anc := ospath.Ancestors(goos, ospath.Clean(goos, p))
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
	return ""
}

// Host is what the checks read and change.
type Host struct {
	// Read returns a path's owner and DACL (acl.Read); an error wrapping
	// fs.ErrNotExist for a missing one.
	Read func(path string) (acl.Security, error)
	// Restrict gives a tree the owner and DACL of acl.DirectorySDDL
	// (acl.ApplyTree).
	Restrict func(root string) error
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

// Audit compares the host with the description, changing nothing. Paths
// that do not exist yet are skipped: whoever creates them restricts them.
// The existing parents of every path are judged up to, not including, the
// drive root (judgeParent). Errors reading a path are returned joined,
// after the findings of the paths that could be read.
func Audit(targets []Target, h Host) ([]Finding, error) {
	var out []Finding
	var errs []error
	seenParent := map[string]bool{}
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
		out = append(out, judge(t, sec, h.Self)...)
	}
	return out, errors.Join(errs...)
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

// Check audits the targets and refuses what Enforce would not repair: what
// a command checks before it changes anything.
func Check(targets []Target, h Host) error {
	findings, err := Audit(targets, h)
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

// Enforce applies the description: first every path is audited, and if
// any is refused nothing is changed and a *RefusedError names each with
// its fix; otherwise each restricted directory that differs is restricted
// again, with everything below it, and reported. always restricts (and
// reports) every restricted directory, differing or not, as join does
// after creating them: a file below an intact root may carry an ACE of
// its own.
func Enforce(targets []Target, h Host, always bool) ([]Repair, error) {
	findings, err := Audit(targets, h)
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
		if !t.Restrict || !(differs || always) {
			continue
		}
		if ok, err := h.Exists(t.Path); err != nil || !ok {
			// Audit skipped it too: it does not exist yet.
			continue
		}
		if err := h.Restrict(t.Path); err != nil {
			kind := "a directory"
			if t.File {
				kind = "a file"
			}
			return repairs, fmt.Errorf("restricting %s (%s) to SYSTEM and Administrators: %w; fix: make sure it is %s on an NTFS volume, not a link, and that the command runs elevated",
				t.Path, t.What, err, kind)
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

// EnforceAll is Enforce restricting every restricted directory, drifted
// or not (join and takeover: a file copied in before may carry an ACE of
// its own), printing each repair to out.
func EnforceAll(targets []Target, h Host, out io.Writer) error {
	repairs, err := Enforce(targets, h, true)
	for _, r := range repairs {
		fmt.Fprintln(out, r)
	}
	return err
}

// HostACLs are this host's ACLs, trusting the account running this
// process when it runs elevated.
func HostACLs() Host {
	self, _ := acl.Self()
	return Host{
		Read:     acl.Read,
		Restrict: func(root string) error { return acl.ApplyTree(root, acl.DirectorySDDL) },
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
		Self:       self,
	}
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
	return made, nil
}

// AtStart is what every node start applies, before the modules start:
// the node's directories and files are enforced (drift repaired, or
// refused as Enforce does), and the executable's directory and file,
// which a running service cannot move, are audited apart, so that a
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
	repairs, err := Enforce(dirs, h, false)
	var refused []Finding
	var r *RefusedError
	if errors.As(err, &r) {
		refused, err = r.Findings, nil
	}
	exe, aerr := Audit(rest, h)
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
