// Package protect is the one description of who may access what on a
// Windows edge host, and the one place that checks and applies it: the
// node's directories (configuration, token, key and certificates, backups
// and the upgrade journal under C:\etc\kubeedge; the database; the
// kubelet's root with its secret volumes; pod logs; static pods; edgecore's
// logs) admit SYSTEM and Administrators only, are owned by Administrators
// and do not inherit C:\'s ACL, under which every user may read; the
// directory of the edgecore.exe the service runs, and the file itself, may
// be changed by no one else. join, `service install`, `config` and every
// node start apply it (Enforce); preflight reports where the host differs
// (Audit).
//
// Why owners matter: the owner of a directory may always rewrite its ACL.
// Any user may create folders in C:\, so one who made C:\etc before join
// would keep the power to replace upgrade\journal.json, from which the
// SYSTEM service starts a backed-up binary. Such a directory, or a parent
// of one, is refused, never silently taken over: what its owner put there
// must be looked at first.
//
// The effects go through Host, so that every decision is tested with a
// recording fake on any build host.
package protect

import (
	"errors"
	"fmt"
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
}

// Targets lists the paths of the description for a node configured by c
// on the host of layout l, running the executable exe ("" when no service
// runs one yet). A directory inside another restricted one is left out:
// restricting the outer one covers it. Outside Windows there are no
// targets: file modes protect those hosts, and these are Windows ACLs.
//
// A directory the configuration names that is a drive root or one of
// Windows' own is refused with the field and the fix: restricting it to
// administrators would break the host.
func Targets(c *v1alpha2.EdgeCoreConfig, l config.Layout, exe string) ([]Target, error) {
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
	}
	add(Target{What: "edgecore's logs, panic log and stack dumps", Path: l.LogDir, Restrict: true})
	if exe != "" {
		add(Target{What: "the directory of the edgecore.exe the service runs", Path: ospath.Dir(goos, exe)})
		add(Target{What: "the edgecore.exe the service runs", Path: exe})
	}
	return out, errors.Join(errs...)
}

// windowsDirs are the top-level directories of a Windows volume that hold
// what every account uses.
var windowsDirs = []string{"Windows", "Program Files", "Program Files (x86)", "ProgramData", "Users"}

// unsafeRoot says why restricting p would break the host, or "".
func unsafeRoot(goos, p string) string {
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
// The existing parents of every path are checked for their owner up to,
// not including, the drive root. Errors reading a path are returned
// joined, after the findings of the paths that could be read.
func Audit(targets []Target, h Host) ([]Finding, error) {
	var out []Finding
	var errs []error
	seenParent := map[string]bool{}
	seenExeParent := map[string]bool{}
	for _, t := range targets {
		// The parents come first, and count even before the target
		// exists: whoever owns C:\etc may read what join is about to
		// write into C:\etc\kubeedge. The parents of the executable
		// count too: whoever may rename its directory may put another
		// in its place.
		anc := ospath.Ancestors(config.Windows, t.Path)
		for _, p := range anc[1 : len(anc)-1] {
			key := strings.ToLower(ospath.Clean(config.Windows, p))
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
			if !acl.Trusted(sec.Owner, h.Self) {
				out = append(out, Finding{Target: t, Path: p, Refuse: true,
					Problem: "is a parent owned by " + acl.TrusteeName(sec.Owner) + ", who may replace what is below it",
					Fix:     fixOwner(p)})
			}
		}
		if !t.Restrict {
			f, err := exeParents(t, anc[1:len(anc)-1], h, seenExeParent)
			out = append(out, f...)
			if err != nil {
				errs = append(errs, err)
			}
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

// exeParents refuses a parent of the executable (or of its directory)
// that an account other than SYSTEM, Administrators, TrustedInstaller and
// h.Self may delete, rename or empty: renaming the directory away and
// creating one of the same name puts their program where the service,
// which runs as SYSTEM, starts edgecore.exe. The drive root is not read,
// as in Audit: it cannot be renamed, and Windows grants users no right to
// remove what is in it. Under Wine a directory's DACL is made up from its
// Unix mode (the owner, SYSTEM, and Everyone for the "other" bits), so a
// checkout in directories of mode 0755, such as the build output
// Z:\...\_output\windows-amd64 the Wine tests install from, passes, and
// one under a world-writable directory (/tmp, 1777: Wine ignores the
// sticky bit) is refused as it would be on Windows.
func exeParents(t Target, parents []string, h Host, seen map[string]bool) ([]Finding, error) {
	var out []Finding
	for _, p := range parents {
		key := strings.ToLower(ospath.Clean(config.Windows, p))
		if seen[key] {
			continue
		}
		seen[key] = true
		ok, err := h.Exists(p)
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		sec, err := h.Read(p)
		if err != nil {
			return out, err
		}
		for _, g := range sec.Removable(h.Self) {
			out = append(out, Finding{Target: t, Path: p, Refuse: true,
				Problem: "is a parent that others may rename or empty: " + acl.TrusteeName(g.Trustee) + " has " + g.Rights +
					", enough to move it away and put another edgecore.exe at the service's path",
				Fix: fixExe(t.Path)})
		}
	}
	return out, nil
}

// judge compares one target with the description.
func judge(t Target, sec acl.Security, self string) []Finding {
	if !acl.Trusted(sec.Owner, self) {
		fix := fixOwner(t.Path)
		if !t.Restrict {
			fix = fixExe(t.Path)
		}
		return []Finding{{Target: t, Path: t.Path, Refuse: true, Problem: "is owned by " + acl.TrusteeName(sec.Owner), Fix: fix}}
	}
	if !t.Restrict {
		var out []Finding
		for _, g := range sec.Others(self) {
			if g.Write {
				out = append(out, Finding{Target: t, Path: t.Path, Refuse: true, Problem: "is writable by others: " + g.String(), Fix: fixExe(t.Path)})
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
			return repairs, fmt.Errorf("restricting %s (%s) to SYSTEM and Administrators: %w; fix: make sure it is a directory on an NTFS volume, not a link, and that the command runs elevated",
				t.Path, t.What, err)
		}
		r := Repair{Path: t.Path, Was: was}
		if sec, err := h.Read(t.Path); err == nil {
			r.NotKept = strings.Join(sec.Drift(), ", ")
		}
		repairs = append(repairs, r)
	}
	return repairs, nil
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
		Self: self,
	}
}

// AtStart is what every node start applies: the node's directories are
// enforced (drift repaired, or refused as Enforce does), and the
// executable's directory and file, which a running service cannot move,
// are only audited, so that a finding there does not keep the data
// directories from being repaired. The caller logs both; the node runs
// on, because stopping it would protect nothing.
func AtStart(targets []Target, h Host) (repairs []Repair, exe []Finding, err error) {
	var dirs, rest []Target
	for _, t := range targets {
		if t.Restrict {
			dirs = append(dirs, t)
		} else {
			rest = append(rest, t)
		}
	}
	repairs, err = Enforce(dirs, h, false)
	exe, aerr := Audit(rest, h)
	return repairs, exe, errors.Join(err, aerr)
}
