//go:build windows

package stackdump

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// Event is a stack dump event this process created.
type Event struct {
	name   string
	signal windows.Handle
	// quit ends a Wait in progress when the event is closed.
	quit windows.Handle

	mu      sync.Mutex
	closed  bool
	waiters sync.WaitGroup
}

// Create creates the auto-reset event name with the security descriptor
// sddl (acl.EventSDDL). An event of that name that exists already is
// refused with ErrExists: another process made it, with an access control
// list of its choosing.
func Create(name, sddl string) (*Event, error) {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return nil, fmt.Errorf("creating event %s: parsing security descriptor %q: %w", name, sddl, err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, fmt.Errorf("creating event %s: %w", name, err)
	}
	h, err := windows.CreateEvent(sa, 0, 0, name16)
	if err == windows.ERROR_ALREADY_EXISTS {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("creating event %s: %w; %s", name, ErrExists, creator(name))
	}
	if err != nil {
		if err == windows.ERROR_ACCESS_DENIED {
			err = fmt.Errorf("%w (creating global objects needs an elevated prompt or the SYSTEM account)", ErrAccessDenied)
		}
		return nil, fmt.Errorf("creating event %s: %w", name, err)
	}
	quit, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("creating event %s: its quit event: %w", name, err)
	}
	return &Event{name: name, signal: h, quit: quit}, nil
}

// creator says which process made the event name before this one, for
// the operator to look at: the process holding it (proc.EventHolders),
// its program and account.
func creator(name string) string {
	pids, err := proc.EventHolders(name)
	if err != nil || len(pids) == 0 {
		why := "no other process holds it any more"
		if err != nil {
			why = err.Error()
		}
		return "another process created it first, with an access list of its choosing (which one could not be found: " + why + ")"
	}
	var who []string
	for _, pid := range pids {
		s := fmt.Sprintf("process %d", pid)
		if id, err := proc.Identify(pid); err == nil {
			s += fmt.Sprintf(" (%s, running as %s)", id.Image, id.Who())
		}
		who = append(who, s)
	}
	return fmt.Sprintf("%s created it first, with an access list of its choosing; fix: stop %s (Stop-Process -Id %d in an elevated PowerShell) and restart edgecore",
		strings.Join(who, " and "), who[0], pids[0])
}

// Name is the event's name.
func (e *Event) Name() string { return e.name }

// Wait blocks until the event is signalled (nil) or closed (ErrClosed).
func (e *Event) Wait() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.waiters.Add(1)
	e.mu.Unlock()
	defer e.waiters.Done()
	r, err := windows.WaitForMultipleObjects([]windows.Handle{e.signal, e.quit}, false, windows.INFINITE)
	switch {
	case err != nil:
		return fmt.Errorf("waiting on event %s: %w", e.name, err)
	case r == windows.WAIT_OBJECT_0:
		return nil
	case r == windows.WAIT_OBJECT_0+1:
		return ErrClosed
	}
	return fmt.Errorf("waiting on event %s: unexpected result %#x", e.name, r)
}

// Close ends a Wait in progress and releases the event; a later Wait
// returns ErrClosed.
func (e *Event) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	err := windows.SetEvent(e.quit)
	// The handles stay valid until no Wait uses them.
	e.waiters.Wait()
	windows.CloseHandle(e.signal)
	windows.CloseHandle(e.quit)
	if err != nil {
		return fmt.Errorf("closing event %s: %w", e.name, err)
	}
	return nil
}

// Signal sets the event name, which makes the process waiting on it write
// its stacks. It asks only for the right to set the event.
func Signal(name string) error {
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return fmt.Errorf("opening event %s: %w", name, err)
	}
	h, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, name16)
	switch err {
	case nil:
	case windows.ERROR_FILE_NOT_FOUND:
		return fmt.Errorf("opening event %s: %w", name, ErrNoEvent)
	case windows.ERROR_ACCESS_DENIED:
		return fmt.Errorf("opening event %s: %w", name, ErrAccessDenied)
	default:
		return fmt.Errorf("opening event %s: %w", name, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.SetEvent(h); err != nil {
		return fmt.Errorf("signalling event %s: %w", name, err)
	}
	return nil
}
