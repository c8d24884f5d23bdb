//go:build !windows

package stdhandle

import (
	"fmt"
	"os"
)

// RedirectStderr fails outside Windows: only a Windows service starts
// without a standard error to keep.
func RedirectStderr(f *os.File) error {
	return fmt.Errorf("pointing standard error at %s: available only in the Windows build of edgecore", f.Name())
}
