package clusterdns

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// wsaeAddrInUse is Windows' WSAEADDRINUSE, which Go's net package returns
// as a bare errno there (syscall.EADDRINUSE is an invented number on
// Windows and never matches it).
const wsaeAddrInUse = syscall.Errno(10048)

// AddressInUse reports whether err is a bind refused because another
// socket holds the address.
func AddressInUse(err error) bool {
	var errno syscall.Errno
	return errors.Is(err, syscall.EADDRINUSE) || (errors.As(err, &errno) && errno == wsaeAddrInUse)
}

// Bounds of ListenRetry: how long a held address is waited for, and the
// pause between two tries.
const (
	ListenRetryFor   = 2 * time.Minute
	listenRetryPause = time.Second
)

// ListenRetry calls listen until it succeeds, fails for another reason
// than a held address, ctx ends or ListenRetryFor has passed: when the
// node restarts, the process it replaces (a service restart, a crash
// Windows is still cleaning up after) may hold the responder's address
// for a moment, and the pods would otherwise go without their DNS server
// until the next restart. waiting is called once, at the first refusal.
func ListenRetry[T any](ctx context.Context, listen func() (T, error), waiting func(error), sleep func(context.Context, time.Duration) bool) (T, error) {
	deadline := ListenRetryFor
	var waited time.Duration
	for {
		v, err := listen()
		if err == nil || !AddressInUse(err) || waited >= deadline {
			return v, err
		}
		if waited == 0 && waiting != nil {
			waiting(err)
		}
		if !sleep(ctx, listenRetryPause) {
			return v, err
		}
		waited += listenRetryPause
	}
}

// SleepOrDone waits d, false when ctx ends first.
func SleepOrDone(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
