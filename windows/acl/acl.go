// Package acl restricts edgecore's files and endpoints on Windows to the
// accounts that run and administer it: SYSTEM (the service) and the
// members of BUILTIN\Administrators (the operator). The security
// descriptors are SDDL strings here, tested on any build host; the Windows
// file applies them.
package acl

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// DirectorySDDL is the security descriptor for C:\etc\kubeedge and every
// other directory of the node: the configuration, the node's private key
// and certificates, the database, the kubelet's root with its secret
// volumes, logs, backups and the upgrade journal. O:BA makes
// Administrators the owner: an owner may always rewrite the DACL, so a
// user who created C:\etc\kubeedge before join would otherwise keep that
// right. P (protected) stops the DACL from inheriting the looser ACL of
// C:\ or C:\etc, which lets every user read; OICI makes files (OI) and
// directories (CI) created later inherit it; FA is full control. No other
// account, Users and Everyone included, gets any access.
const DirectorySDDL = "O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"

// FileSDDL is the security descriptor of a secret file edgecore creates
// outside the node's restricted folders (a configuration written with
// `config --output`): SYSTEM and Administrators only, owned by
// Administrators, not inheriting its folder's ACL.
const FileSDDL = "O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)"

// ParentSDDL is the security descriptor of a directory edgecore creates
// above the node's own (C:\etc, C:\var, C:\var\lib when they do not exist
// yet): Administrators own it, SYSTEM and Administrators may change it,
// Users may read and traverse it, as they may C:\, and no one else may
// rename, empty or re-permission it. A folder made in C:\ would otherwise
// inherit C:\'s ACL, which on client editions lets Authenticated Users
// modify what is created below it: rename C:\etc away and put their own
// C:\etc\kubeedge in its place. P stops that inheritance; OICI passes the
// same rights to what is created below, which the node's own directories
// replace with DirectorySDDL. 0x1200a9 is read, list, traverse and
// synchronize.
const ParentSDDL = "O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"

// ObjectSDDL is the security descriptor for edgecore's named kernel
// objects, which other processes open by name: only SYSTEM and
// Administrators may open them. Such an object has no children, so nothing
// is inherited; GA is all access.
const ObjectSDDL = "D:P(A;;GA;;;SY)(A;;GA;;;BA)"

// PipeSDDL is the security descriptor for the DMI named pipe, through which
// device mappers talk to edgecore.
const PipeSDDL = ObjectSDDL

// EventSDDL is the security descriptor for the stack dump event
// Global\stackdump-<pid>: whoever may signal it makes edgecore write every
// goroutine's stack to disk, and whoever may wait on it learns when.
const EventSDDL = ObjectSDDL

// inheritOnlySDDL is an empty DACL. Set without protection on an entry
// below the root, it leaves exactly the ACEs inherited from the root,
// removing any explicit ACE that granted someone else access. The owner
// below the root is set to the root's, so that no file in the tree stays
// owned by whoever created it.
const inheritOnlySDDL = "D:"

// walk calls apply for root and for every file and directory below it,
// parents before their children. An entry isLink reports is neither
// changed nor entered: setting an ACL through a symbolic link or junction
// changes its target, which may be outside the tree (a junction to
// C:\Windows, say). A root that is itself a link is refused. An entry
// below root that leave reports (nil leaves none) is neither changed nor
// entered either: what workloads own there keeps its owner (protect
// decides which entries those are).
func walk(root string, isLink func(path string, d fs.DirEntry) (bool, error), leave func(path string) bool, apply func(path string, isRoot bool) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return fmt.Errorf("restricting access to %s: %w", root, err)
			}
			return fmt.Errorf("restricting access to %s: reading %s: %w", root, path, err)
		}
		if path != root && leave != nil && leave(path) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		link, err := isLink(path, d)
		if err != nil {
			return fmt.Errorf("restricting access to %s: examining %s: %w", root, path, err)
		}
		if link {
			if path == root {
				return fmt.Errorf("restricting access to %s: it is a symbolic link or junction; pass the directory it points to", root)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err := apply(path, path == root); err != nil {
			return fmt.Errorf("restricting access to %s: %s: %w", root, path, err)
		}
		return nil
	})
}

// isLinkMode is the part of the link test that file modes answer on every
// platform: symbolic links, and what Go marks irregular (on Windows, mount
// points and other reparse points).
func isLinkMode(m fs.FileMode) bool {
	return m&(fs.ModeSymlink|fs.ModeIrregular) != 0
}

// Entry is one file or directory of a directory as List reads it: from
// the entry itself, never through a link it is.
type Entry struct {
	Name string
	Dir  bool
	// Security is its owner and DACL; empty for a link, which is judged
	// by what it is, not by whom it belongs to.
	Security Security
	// Links is its number of names (hard links): more than one for a
	// file that is also reachable by another path.
	Links uint32
	// Reparse is set for a reparse point, and ReparseTag says which kind
	// when Windows says (0 when it does not: Wine reports a Unix symbolic
	// link to a directory only by the attribute).
	Reparse    bool
	ReparseTag uint32
	// ID tells this file or folder from one made later at the same path:
	// its volume's serial number and its file index.
	ID string
}

// Reparse point tags, as Windows defines them (ntifs.h).
const (
	// ReparseTagMountPoint is a junction or a volume mount point.
	ReparseTagMountPoint = 0xA0000003
	ReparseTagSymlink    = 0xA000000C
	// ReparseTagAFUnix is a Unix domain socket: what the kubelet and
	// device plugins listen on, a file, not a link.
	ReparseTagAFUnix = 0x80000023
	// ReparseTagDedup is a file Windows Server's data deduplication
	// keeps in its chunk store: its content, served by Windows' own
	// filter, is what was written to it.
	ReparseTagDedup = 0x80000013
)

// IsLink reports whether e stands for another file or folder: a symbolic
// link, a junction, a mount point, or any reparse point that is not a
// socket or a deduplicated file, whose filter may serve anything.
func (e Entry) IsLink() bool {
	if !e.Reparse {
		return false
	}
	switch e.ReparseTag {
	case ReparseTagAFUnix, ReparseTagDedup:
		return false
	}
	return true
}

// LinkKind names the kind of link e is, for messages.
func (e Entry) LinkKind() string {
	switch e.ReparseTag {
	case ReparseTagSymlink:
		return "a symbolic link"
	case ReparseTagMountPoint:
		return "a junction or mount point"
	case 0:
		return "a symbolic link, junction or mount point"
	}
	return fmt.Sprintf("a reparse point (tag %#x)", e.ReparseTag)
}
