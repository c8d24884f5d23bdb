package reconnect

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestForHeartbeat(t *testing.T) {
	for _, c := range []struct{ heartbeat, cap time.Duration }{
		{15 * time.Second, 1500 * time.Millisecond}, // edgecore's default
		{60 * time.Second, 6 * time.Second},
		{5 * time.Second, time.Second}, // never below a second
	} {
		b := ForHeartbeat(c.heartbeat)
		if b.Cap != c.cap || b.Stable != c.heartbeat || b.Base != Base {
			t.Errorf("ForHeartbeat(%v) = base %v, cap %v, stable %v; want %v, %v, %v",
				c.heartbeat, b.Base, b.Cap, b.Stable, Base, c.cap, c.heartbeat)
		}
	}
}

// fixed draws v every time.
func fixed(v float64) func() float64 { return func() float64 { return v } }

// After failed attempts the bound doubles from Base to Cap, and each wait
// lies in the upper half of its bound: never an immediate retry.
func TestFailedAttemptsGrowToCap(t *testing.T) {
	const ms = time.Millisecond
	bounds := []time.Duration{250 * ms, 500 * ms, 1000 * ms, 1500 * ms, 1500 * ms, 1500 * ms}
	low := &Backoff{Base: Base, Cap: 1500 * ms, Stable: 15 * time.Second, Float64: fixed(0)}
	high := &Backoff{Base: Base, Cap: 1500 * ms, Stable: 15 * time.Second, Float64: fixed(0.999999)}
	for i, bound := range bounds {
		if got := low.Next(0); got != bound/2 {
			t.Errorf("attempt %d: shortest wait %v, want %v", i+1, got, bound/2)
		}
		if got := high.Next(0); got >= bound || got < bound-ms {
			t.Errorf("attempt %d: longest wait %v, want just under %v", i+1, got, bound)
		}
	}
}

// A cap below the base bounds the very first wait too, and many failures
// do not overflow the doubling.
func TestBoundNeverPassesCap(t *testing.T) {
	b := &Backoff{Base: time.Second, Cap: 300 * time.Millisecond, Stable: time.Minute, Float64: fixed(0.999999)}
	for i := 0; i < 100; i++ {
		if got := b.Next(0); got >= b.Cap {
			t.Fatalf("attempt %d: wait %v, not under the cap %v", i+1, got, b.Cap)
		}
	}
}

// When a connection that held breaks, every node sees it at the same
// moment: their waits must spread evenly over [0, Cap), which is what
// keeps a cloud that comes back from meeting every node at once.
func TestBreakAfterHoldingSpreadsOverCap(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	const nodes, buckets = 10000, 10
	var count [buckets]int
	for i := 0; i < nodes; i++ {
		b := ForHeartbeat(15 * time.Second)
		b.Float64 = r.Float64
		w := b.Next(time.Hour)
		if w < 0 || w >= b.Cap {
			t.Fatalf("wait %v outside [0, %v)", w, b.Cap)
		}
		count[int(w*buckets/b.Cap)]++
	}
	for i, n := range count {
		// Uniform: 1000 a bucket; 10% off is over 3 standard deviations.
		if n < 900 || n > 1100 {
			t.Errorf("%d of %d waits in [%v, %v): not spread evenly: %v", n, nodes,
				time.Duration(i)*150*time.Millisecond, time.Duration(i+1)*150*time.Millisecond, count)
		}
	}
}

// A connection that held resets the growth: the node that comes back
// after a long outage is as quick at the next one. One that broke before
// it held counts as a failed attempt, so a cloud that accepts and drops
// connections is not retried at the fastest pace.
func TestHoldingConnectionResets(t *testing.T) {
	b := &Backoff{Base: Base, Cap: 1500 * time.Millisecond, Stable: 15 * time.Second, Float64: fixed(0)}
	for i := 0; i < 5; i++ {
		b.Next(0)
	}
	if got := b.Next(14 * time.Second); got != 750*time.Millisecond {
		t.Errorf("after a connection that broke within Stable: wait %v, want the capped 750ms", got)
	}
	if got := b.Next(15 * time.Second); got != 0 {
		t.Errorf("after a connection that held: wait %v, want a draw from [0, cap) (0 here)", got)
	}
	if got := b.Next(0); got != Base/2 {
		t.Errorf("first failure after a connection that held: wait %v, want %v", got, Base/2)
	}
}

// The default draw is math/rand/v2's and stays within the bounds.
func TestDefaultDraw(t *testing.T) {
	b := ForHeartbeat(15 * time.Second)
	for i := 0; i < 1000; i++ {
		if w := b.Next(time.Minute); w < 0 || w >= b.Cap {
			t.Fatalf("wait %v outside [0, %v)", w, b.Cap)
		}
		if w := b.Next(0); w < Base/2 || w >= b.Cap {
			t.Fatalf("wait %v outside [%v, %v)", w, Base/2, b.Cap)
		}
	}
}
