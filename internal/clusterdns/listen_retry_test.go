package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

func inUse(errno syscall.Errno) error {
	return &net.OpError{Op: "listen", Net: "udp", Err: os.NewSyscallError("bind", errno)}
}

// A held address is tried again, on Linux's errno and Windows' alike,
// until it is free; any other failure ends at once; the wait is bounded
// and ends with the node.
func TestListenRetryWaitsForAHeldAddress(t *testing.T) {
	noSleep := func(context.Context, time.Duration) bool { return true }
	for _, errno := range []syscall.Errno{syscall.EADDRINUSE, wsaeAddrInUse} {
		tries, told := 0, 0
		v, err := ListenRetry(context.Background(), func() (int, error) {
			tries++
			if tries < 4 {
				return 0, inUse(errno)
			}
			return 7, nil
		}, func(error) { told++ }, noSleep)
		if err != nil || v != 7 || tries != 4 || told != 1 {
			t.Errorf("errno %d: got %d, %v after %d tries, told %d times; want 7 after 4 tries, told once", errno, v, err, tries, told)
		}
	}

	tries := 0
	other := inUse(syscall.EACCES)
	if _, err := ListenRetry(context.Background(), func() (int, error) { tries++; return 0, other }, nil, noSleep); !errors.Is(err, syscall.EACCES) || tries != 1 {
		t.Errorf("another failure: %v after %d tries, want it at once", err, tries)
	}

	tries = 0
	if _, err := ListenRetry(context.Background(), func() (int, error) { tries++; return 0, inUse(syscall.EADDRINUSE) }, nil, noSleep); !AddressInUse(err) {
		t.Errorf("an address held for ever: %v, want the refusal", err)
	}
	if want := int(ListenRetryFor/listenRetryPause) + 1; tries != want {
		t.Errorf("an address held for ever was tried %d times, want %d (%s)", tries, want, ListenRetryFor)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tries = 0
	if _, err := ListenRetry(ctx, func() (int, error) { tries++; return 0, inUse(syscall.EADDRINUSE) }, nil, SleepOrDone); err == nil || tries != 1 {
		t.Errorf("a node that stops: %v after %d tries, want the refusal after one", err, tries)
	}
}

// The refusal Go's net package returns for a held address is recognised.
func TestAddressInUseOfARealBind(t *testing.T) {
	a, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = net.ListenPacket("udp", a.LocalAddr().String())
	if !AddressInUse(err) {
		t.Errorf("binding %s twice: %v, not recognised as a held address", a.LocalAddr(), err)
	}
	if AddressInUse(fmt.Errorf("x: %w", syscall.EACCES)) {
		t.Error("EACCES taken for a held address")
	}
}
