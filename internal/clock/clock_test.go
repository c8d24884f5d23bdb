package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRealSleepWaits(t *testing.T) {
	began := time.Now()
	if err := (Real{}).Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatalf("Sleep: %v", err)
	}
	if waited := time.Since(began); waited < 20*time.Millisecond {
		t.Errorf("returned after %v, before the 20ms asked for", waited)
	}
}

// A stopped command must not sit out a long wait.
func TestRealSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	began := time.Now()
	if err := (Real{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context: %v, want context.Canceled", err)
	}
	if waited := time.Since(began); waited > time.Minute {
		t.Errorf("waited %v after the context ended", waited)
	}
}
