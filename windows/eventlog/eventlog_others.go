//go:build !windows

package eventlog

// Install fails with ErrNotSupported outside Windows.
func Install(string) error { return ErrNotSupported }

// Remove fails with ErrNotSupported outside Windows.
func Remove(string) error { return ErrNotSupported }

// Open fails with ErrNotSupported outside Windows.
func Open(string) (Log, error) { return nil, ErrNotSupported }
