//go:build !windows

package acl

import "fmt"

// ApplyTree fails outside Windows: the SDDL descriptors are Windows ACLs.
func ApplyTree(root, _ string) error {
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
