//go:build windows

package acl

import (
	"fmt"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ApplyTree gives root the owner and DACL of sddl, the DACL protected
// from inheriting its parent's, and resets every file and directory below
// root to the same owner and a DACL of only what it inherits from root.
// Symbolic links and junctions below root are left alone and not entered.
// Setting the owner to Administrators needs no privilege when the caller
// is SYSTEM or an elevated administrator: both hold that group with the
// right to own.
//
// golang.org/x/sys at the version this module pins has
// SecurityDescriptorFromString and SetNamedSecurityInfo but not
// TreeSetNamedSecurityInfo, hence the walk.
func ApplyTree(root, sddl string) error {
	owner, dacl, err := parse(sddl)
	if err != nil {
		return err
	}
	_, inherit, err := parse(inheritOnlySDDL)
	if err != nil {
		return err
	}
	var ownerInfo windows.SECURITY_INFORMATION
	if owner != nil {
		ownerInfo = windows.OWNER_SECURITY_INFORMATION
	}
	return walk(root, isLink, func(path string, isRoot bool) error {
		if isRoot {
			return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
				ownerInfo|windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION,
				owner, nil, dacl, nil)
		}
		return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
			ownerInfo|windows.DACL_SECURITY_INFORMATION|windows.UNPROTECTED_DACL_SECURITY_INFORMATION,
			owner, nil, inherit, nil)
	})
}

// Mkdir creates the directory path, whose parent exists, with the owner
// and DACL of sddl from its first moment: a directory created first and
// restricted after may be opened, or have files put in it, under its
// parent's looser ACL in between. "" gives it what it inherits from its
// parent, as os.Mkdir does. An existing path fails with an error
// wrapping fs.ErrExist, a missing parent with one wrapping
// fs.ErrNotExist.
func Mkdir(path, sddl string) error {
	var sa *windows.SecurityAttributes
	if sddl != "" {
		sd, err := windows.SecurityDescriptorFromString(sddl)
		if err != nil {
			return fmt.Errorf("creating %s: parsing security descriptor %q: %w", path, sddl, err)
		}
		sa = &windows.SecurityAttributes{SecurityDescriptor: sd}
		sa.Length = uint32(unsafe.Sizeof(*sa))
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	if err := windows.CreateDirectory(p, sa); err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// CreateFile creates the new file path, failing when it exists, with the
// owner and DACL of sddl from its first byte: a secret written to a file
// created first and restricted after could be read, under its folder's
// looser ACL, in between.
func CreateFile(path, sddl string) (*os.File, error) {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return nil, fmt.Errorf("creating %s: parsing security descriptor %q: %w", path, sddl, err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, sa, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// Describe returns the DACL of path as SDDL, for checks and diagnostics.
func Describe(path string) (string, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return "", fmt.Errorf("reading the access control list of %s: %w", path, err)
	}
	return sd.String(), nil
}

// Read returns the owner and DACL of path as Windows reports them.
func Read(path string) (Security, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return Security{}, fmt.Errorf("reading the owner and access control list of %s: %w", path, err)
	}
	return ParseSDDL(sd.String())
}

// Self is the SID of the account this process runs as when it runs
// elevated (SYSTEM, or "Run as administrator"), and "" otherwise: only an
// elevated process is proof that its account is an administrator, whose
// files the checks may trust.
func Self() (string, error) {
	tok := windows.GetCurrentProcessToken()
	if !tok.IsElevated() {
		return "", nil
	}
	u, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("reading the account this process runs as: %w", err)
	}
	return u.User.Sid.String(), nil
}

func daclOf(sddl string) (*windows.ACL, error) {
	_, dacl, err := parse(sddl)
	return dacl, err
}

// parse returns the owner (nil when sddl has no O: part) and the DACL of
// sddl.
func parse(sddl string) (*windows.SID, *windows.ACL, error) {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing security descriptor %q: %w", sddl, err)
	}
	// Both point into sd, which the pointers keep alive.
	owner, _, err := sd.Owner()
	if err != nil {
		return nil, nil, fmt.Errorf("security descriptor %q: reading its owner: %w", sddl, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return nil, nil, fmt.Errorf("security descriptor %q has no DACL: %w", sddl, err)
	}
	return owner, dacl, nil
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
