//go:build !windows

package acl

import (
	"fmt"
	"os"
)

// ApplyTree fails outside Windows: the SDDL descriptors are Windows ACLs.
func ApplyTree(root, _ string, _ func(string) bool) error {
	return fmt.Errorf("restricting access to %s: Windows access control lists are available only in the Windows build of edgecore", root)
}

// Describe fails outside Windows.
func Describe(path string) (string, error) {
	return "", fmt.Errorf("reading the access control list of %s: available only in the Windows build of edgecore", path)
}

// Read fails outside Windows.
func Read(path string) (Security, error) {
	return Security{}, fmt.Errorf("reading the owner and access control list of %s: available only in the Windows build of edgecore", path)
}

// Self fails outside Windows.
func Self() (string, error) {
	return "", fmt.Errorf("reading the account this process runs as: available only in the Windows build of edgecore")
}

// Mkdir creates the directory path with mode 0750 outside Windows, where
// modes, not the Windows ACL sddl describes, protect the node's files, as
// they did before edgecore set descriptors.
func Mkdir(path, _ string) error { return os.Mkdir(path, 0o750) }

// CreateFile creates the new file path with mode 0600 outside Windows,
// failing when it exists.
func CreateFile(path, _ string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// List fails outside Windows: owners and ACLs are Windows'.
func List(dir string) ([]Entry, error) {
	return nil, fmt.Errorf("reading the owners of the entries of %s: available only in the Windows build of edgecore", dir)
}

// ReadSDDL fails outside Windows.
func ReadSDDL(path string) (string, error) {
	return "", fmt.Errorf("reading the owner and access control list of %s: available only in the Windows build of edgecore", path)
}

// SetSDDL fails outside Windows.
func SetSDDL(path, _ string) error {
	return fmt.Errorf("setting the owner and access control list of %s: available only in the Windows build of edgecore", path)
}
