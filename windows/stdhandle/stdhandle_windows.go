//go:build windows

package stdhandle

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// RedirectStderr makes f the process's standard error: the handle the Go
// runtime writes panics and fatal errors to, and os.Stderr, which klog and
// fmt.Fprint(os.Stderr, ...) use. f must stay open for as long as the
// process runs.
func RedirectStderr(f *os.File) error {
	if err := windows.SetStdHandle(windows.STD_ERROR_HANDLE, windows.Handle(f.Fd())); err != nil {
		return fmt.Errorf("pointing standard error at %s: %w", f.Name(), err)
	}
	os.Stderr = f
	return nil
}
