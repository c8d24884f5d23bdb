//go:build !windows

package stackdump

import "fmt"

// Event exists only on Windows; Create fails elsewhere.
type Event struct{}

// Create fails outside Windows: named events with an access control list
// are a Windows feature (elsewhere, Go dumps stacks on SIGQUIT).
func Create(name, _ string) (*Event, error) {
	return nil, fmt.Errorf("creating event %s: available only in the Windows build of edgecore", name)
}

// Name is empty outside Windows.
func (*Event) Name() string { return "" }

// Wait returns ErrClosed outside Windows.
func (*Event) Wait() error { return ErrClosed }

// Close does nothing outside Windows.
func (*Event) Close() error { return nil }

// Signal fails outside Windows.
func Signal(name string) error {
	return fmt.Errorf("opening event %s: available only in the Windows build of edgecore", name)
}
