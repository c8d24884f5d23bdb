//go:build windows

package acl

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/windows"
)

// ApplyTree gives root the DACL of sddl, protected from inheriting its
// parent's, and resets every file and directory below root to carry only
// what it inherits from root. Symbolic links and junctions below root are
// left alone and not entered.
//
// golang.org/x/sys at the version this module pins has
// SecurityDescriptorFromString and SetNamedSecurityInfo but not
// TreeSetNamedSecurityInfo, hence the walk.
func ApplyTree(root, sddl string) error {
	dacl, err := daclOf(sddl)
	if err != nil {
		return err
	}
	inherit, err := daclOf(inheritOnlySDDL)
	if err != nil {
		return err
	}
	return walk(root, isLink, func(path string, isRoot bool) error {
		if isRoot {
			return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
				windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION,
				nil, nil, dacl, nil)
		}
		return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
			windows.DACL_SECURITY_INFORMATION|windows.UNPROTECTED_DACL_SECURITY_INFORMATION,
			nil, nil, inherit, nil)
	})
}

// Describe returns the DACL of path as SDDL, for checks and diagnostics.
func Describe(path string) (string, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return "", fmt.Errorf("reading the access control list of %s: %w", path, err)
	}
	return sd.String(), nil
}

func daclOf(sddl string) (*windows.ACL, error) {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return nil, fmt.Errorf("parsing security descriptor %q: %w", sddl, err)
	}
	// The DACL points into sd, which the pointer keeps alive.
	dacl, _, err := sd.DACL()
	if err != nil {
		return nil, fmt.Errorf("security descriptor %q has no DACL: %w", sddl, err)
	}
	return dacl, nil
}

// isLink adds the reparse-point attribute to the mode test, so that a
// junction is recognised whatever mode bits the Go release gives it.
func isLink(path string, d fs.DirEntry) (bool, error) {
	if isLinkMode(d.Type()) {
		return true, nil
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false, err
	}
	attrs, err := windows.GetFileAttributes(p)
	if err != nil {
		return false, err
	}
	return attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0, nil
}
