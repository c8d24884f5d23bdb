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
// C:\Windows, say). A root that is itself a link is refused.
func walk(root string, isLink func(path string, d fs.DirEntry) (bool, error), apply func(path string, isRoot bool) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return fmt.Errorf("restricting access to %s: %w", root, err)
			}
			return fmt.Errorf("restricting access to %s: reading %s: %w", root, path, err)
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
