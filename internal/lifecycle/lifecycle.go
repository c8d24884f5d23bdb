// Package lifecycle owns how a process of edgecore is stopped: the node
// runs under one context, ended by Ctrl+C in a console or by the service
// manager's Stop or Shutdown as a service, and by nothing else. The signal
// source is an interface so that tests deliver signals without sending any
// to the test process.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Signals is where stop signals come from: os/signal in the process, a
// fake in tests.
type Signals interface {
	Notify(c chan<- os.Signal, sig ...os.Signal)
	Stop(c chan<- os.Signal)
}

// ProcessSignals are the process's own signals.
type ProcessSignals struct{}

func (ProcessSignals) Notify(c chan<- os.Signal, sig ...os.Signal) { signal.Notify(c, sig...) }
func (ProcessSignals) Stop(c chan<- os.Signal)                     { signal.Stop(c) }

// ConsoleStopSignals are the signals that stop a command run from a console
// on goos. On Windows that is Ctrl+C and Ctrl+Break (os.Interrupt) only: Go
// turns CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT into SIGTERM, and a
// process that listens for SIGTERM would take any user's log-off as a stop
// request. Elsewhere SIGTERM is how supervisors stop a process.
func ConsoleStopSignals(goos string) []os.Signal {
	if goos == "windows" {
		return []os.Signal{os.Interrupt}
	}
	return []os.Signal{os.Interrupt, syscall.SIGTERM}
}

// ErrStopRequested is the cause of a context ended by a stop request.
var ErrStopRequested = errors.New("stop requested")

// ConsoleContext is the context of a command run from a console: it ends on
// the first of ConsoleStopSignals(goos) from src. Call the returned stop
// function when the command returns.
func ConsoleContext(parent context.Context, goos string, src Signals) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	src.Notify(ch, ConsoleStopSignals(goos)...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(fmt.Errorf("%w: got signal %v", ErrStopRequested, s))
		case <-ctx.Done():
		case <-done:
		}
	}()
	return ctx, func() {
		src.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// ServiceContext is the context of the node run as a service: it ends only
// when the service handler calls the returned function (the service
// manager's Stop or Shutdown). It listens to no signal at all, so that a
// user logging off, which Windows reports to services as
// CTRL_LOGOFF_EVENT and Go as SIGTERM, never stops the service.
func ServiceContext(parent context.Context) (context.Context, func(reason string)) {
	ctx, cancel := context.WithCancelCause(parent)
	return ctx, func(reason string) { cancel(fmt.Errorf("%w: %s", ErrStopRequested, reason)) }
}

// NodeContext is the one context the node runs under, and the function
// that ends it with a reason: as a service (asService) the ServiceContext,
// whose end the service handler calls for Stop and Shutdown; in a console
// the ConsoleContext over src. release frees the signal subscription.
func NodeContext(parent context.Context, asService bool, goos string, src Signals) (ctx context.Context, stop func(reason string), release func()) {
	if asService {
		svcCtx, end := ServiceContext(parent)
		return svcCtx, end, func() { end("released") }
	}
	base, cancel := context.WithCancelCause(parent)
	console, unsubscribe := ConsoleContext(base, goos, src)
	return console, func(reason string) { cancel(fmt.Errorf("%w: %s", ErrStopRequested, reason)) }, func() {
		unsubscribe()
		cancel(context.Canceled)
	}
}
