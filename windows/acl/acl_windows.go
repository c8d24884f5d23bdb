//go:build windows

package acl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ApplyTree gives root the owner and DACL of sddl, the DACL protected
// from inheriting its parent's, and resets every file and directory below
// root to the same owner and a DACL of only what it inherits from root.
// Symbolic links and junctions below root are left alone and not entered,
// and so is what leave reports (nil leaves nothing).
// Setting the owner to Administrators needs no privilege when the caller
// is SYSTEM or an elevated administrator: both hold that group with the
// right to own.
//
// golang.org/x/sys at the version this module pins has
// SecurityDescriptorFromString and SetNamedSecurityInfo but not
// TreeSetNamedSecurityInfo, hence the walk.
func ApplyTree(root, sddl string, leave func(path string) bool) error {
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
	return walk(root, isLink, leave, func(path string, isRoot bool) error {
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

// List returns the entries of the directory dir, each read from the entry
// itself through a handle opened on it, not on what it points to
// (FILE_FLAG_OPEN_REPARSE_POINT): its owner and DACL, its number of hard
// links (GetFileInformationByHandle's NumberOfLinks) and whether it is a
// reparse point, with its tag. The handle asks only to read the
// descriptor and the attributes, which no sharing mode of another
// process's open refuses, so files in use (the database) are read too.
// An entry removed meanwhile is left out.
func List(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		e, err := readEntry(filepath.Join(dir, de.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		e.Name = de.Name()
		// Wine reports a Unix symbolic link to a directory as a reparse
		// point only when listing the directory; opened, it is its target.
		if !e.Reparse && isLinkMode(de.Type()) {
			e.Reparse, e.Dir = true, de.IsDir()
		}
		out = append(out, e)
	}
	return out, nil
}

// fileAttributeTagInfo is FILE_ATTRIBUTE_TAG_INFO.
type fileAttributeTagInfo struct {
	FileAttributes uint32
	ReparseTag     uint32
}

func readEntry(path string) (Entry, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return Entry{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL|windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return Entry{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return Entry{}, fmt.Errorf("reading the attributes of %s: %w", path, err)
	}
	e := Entry{
		Dir:     info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0,
		Links:   info.NumberOfLinks,
		Reparse: info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0,
		ID:      fmt.Sprintf("%08x-%08x%08x", info.VolumeSerialNumber, info.FileIndexHigh, info.FileIndexLow),
	}
	if e.Reparse {
		var tag fileAttributeTagInfo
		if err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&tag)), uint32(unsafe.Sizeof(tag))); err != nil {
			return Entry{}, fmt.Errorf("reading the reparse tag of %s: %w", path, err)
		}
		e.ReparseTag = tag.ReparseTag
	}
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return Entry{}, fmt.Errorf("reading the owner and access control list of %s: %w", path, err)
	}
	if e.Security, err = ParseSDDL(sd.String()); err != nil {
		return Entry{}, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// ReadSDDL returns the owner and DACL of path as one SDDL string, as
// Windows writes it: what SetSDDL puts back.
func ReadSDDL(path string) (string, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return "", fmt.Errorf("reading the owner and access control list of %s: %w", path, err)
	}
	return sd.String(), nil
}

// SetSDDL gives path the owner and DACL of sddl (as ReadSDDL read them),
// protected from inheritance when sddl's DACL is (P), inheriting from its
// parent otherwise. An owner other than the caller's account and the
// groups it may own with (TrustedInstaller, say) needs the restore
// privilege, which SYSTEM and elevated administrators hold disabled: it
// is enabled for this call only.
func SetSDDL(path, sddl string) error {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return fmt.Errorf("parsing security descriptor %q: %w", sddl, err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("security descriptor %q: reading its owner: %w", sddl, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("security descriptor %q has no DACL: %w", sddl, err)
	}
	control, _, err := sd.Control()
	if err != nil {
		return fmt.Errorf("security descriptor %q: %w", sddl, err)
	}
	info := windows.SECURITY_INFORMATION(windows.DACL_SECURITY_INFORMATION | windows.UNPROTECTED_DACL_SECURITY_INFORMATION)
	if control&windows.SE_DACL_PROTECTED != 0 {
		info = windows.DACL_SECURITY_INFORMATION | windows.PROTECTED_DACL_SECURITY_INFORMATION
	}
	if owner != nil {
		info |= windows.OWNER_SECURITY_INFORMATION
		undo, err := enableRestorePrivilege()
		if err != nil {
			return fmt.Errorf("giving %s its owner back: %w", path, err)
		}
		defer undo()
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, info, owner, nil, dacl, nil); err != nil {
		return fmt.Errorf("giving %s the owner and access control list %s: %w", path, sddl, err)
	}
	return nil
}

// enableRestorePrivilege enables SeRestorePrivilege in this process's
// token, which lets it set any account as a file's owner, and returns what
// puts the privilege back as it was.
func enableRestorePrivilege() (func(), error) {
	var luid windows.LUID
	name, _ := windows.UTF16PtrFromString("SeRestorePrivilege")
	if err := windows.LookupPrivilegeValue(nil, name, &luid); err != nil {
		return nil, fmt.Errorf("looking up SeRestorePrivilege: %w", err)
	}
	var tok windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_ADJUST_PRIVILEGES|windows.TOKEN_QUERY, &tok); err != nil {
		return nil, fmt.Errorf("opening this process's token: %w", err)
	}
	tp := windows.Tokenprivileges{PrivilegeCount: 1}
	tp.Privileges[0] = windows.LUIDAndAttributes{Luid: luid, Attributes: windows.SE_PRIVILEGE_ENABLED}
	var prev windows.Tokenprivileges
	var n uint32
	if err := windows.AdjustTokenPrivileges(tok, false, &tp, uint32(unsafe.Sizeof(prev)), &prev, &n); err != nil {
		tok.Close()
		return nil, fmt.Errorf("enabling SeRestorePrivilege (run elevated): %w", err)
	}
	return func() {
		if prev.PrivilegeCount > 0 {
			windows.AdjustTokenPrivileges(tok, false, &prev, 0, nil, nil)
		}
		tok.Close()
	}, nil
}
