// Package reconnect paces edgeHub's reconnections to cloudcore
// (edgehub.ReconnectWait, the hook of patches/0012). A node must be back
// within a second or two of cloudcore answering again, and the nodes of a
// cloud must not all come back in the same instant: every node sees the
// cloud go at the same moment, and a cloud that is flooded with handshakes
// when it comes back may fall over again.
package reconnect

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Backoff is the wait before each attempt to connect again. After a
// connection that had held for Stable breaks, the wait is drawn uniformly
// from [0, Cap): the nodes that lost the cloud together come back spread
// over Cap, none of them later than Cap. After a failed attempt, or a
// connection that broke before it held, the wait grows from Base, doubling
// up to Cap, and is drawn from the upper half of that bound ("equal
// jitter"): a node never retries at once, and nodes that fail together
// drift apart. A connection that holds resets the growth.
type Backoff struct {
	Base, Cap, Stable time.Duration
	// Float64 draws from [0, 1); math/rand/v2's by default.
	Float64 func() float64

	mu       sync.Mutex
	failures int
}

// Base is the first bound after a failed attempt.
const Base = 250 * time.Millisecond

// ForHeartbeat is the policy for a hub whose keepalive period is
// heartbeat (modules.edgeHub.heartbeat): waits of at most a tenth of it,
// but at least a second, and a connection holds once it has lasted a
// heartbeat period (it has carried a keepalive after the first). An
// operator of a large fleet who wants the nodes to come back more slowly
// raises the heartbeat. With the default of 15 s: at most 1.5 s.
func ForHeartbeat(heartbeat time.Duration) *Backoff {
	return &Backoff{Base: Base, Cap: max(heartbeat/10, time.Second), Stable: heartbeat}
}

// Next returns how long to wait before the next attempt; lasted is how
// long the connection that just broke had been up, 0 after an attempt
// that failed.
func (b *Backoff) Next(lasted time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	draw := b.Float64
	if draw == nil {
		draw = rand.Float64
	}
	if lasted >= b.Stable && lasted > 0 {
		b.failures = 0
		return time.Duration(draw() * float64(b.Cap))
	}
	bound := b.Cap
	if b.failures < 16 && b.Base<<b.failures < b.Cap {
		bound = b.Base << b.failures
	}
	b.failures++
	return bound/2 + time.Duration(draw()*float64(bound-bound/2))
}
