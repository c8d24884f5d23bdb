package node

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWaitForRuntimeUntilItAnswers(t *testing.T) {
	calls := 0
	probe := func(_ context.Context, endpoint string) error {
		calls++
		if endpoint != "npipe://./pipe/containerd-containerd" {
			t.Errorf("probed %q", endpoint)
		}
		if calls < 3 {
			return errors.New("open //./pipe/containerd-containerd: File not found")
		}
		return nil
	}
	err := waitForRuntime(context.Background(), "npipe://./pipe/containerd-containerd", probe, time.Millisecond, time.Hour)
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d probes, want nil after 3", err, calls)
	}
}

func TestWaitForRuntimeEndsWithTheNode(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("the service manager asked the service to stop")
	probe := func(context.Context, string) error {
		cancel(stop)
		return errors.New("connection refused")
	}
	if err := waitForRuntime(ctx, "npipe://./pipe/containerd-containerd", probe, time.Hour, time.Hour); !errors.Is(err, stop) {
		t.Fatalf("got %v, want the stop's cause", err)
	}
}
