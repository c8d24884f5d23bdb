//go:build windows

package durable

import (
	"os"

	"golang.org/x/sys/windows"
)

// Rename moves from to to, replacing to, and returns once the move is on
// disk: MoveFileEx with MOVEFILE_REPLACE_EXISTING (what os.Rename uses)
// and MOVEFILE_WRITE_THROUGH. The error is an *os.LinkError, as
// os.Rename's, so callers and messages need not tell them apart.
func Rename(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	if err := windows.MoveFileEx(f, t, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
