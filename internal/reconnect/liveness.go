package reconnect

import (
	"sync/atomic"
	"time"
)

// pingMessage is the message type of a websocket ping (RFC 6455's opcode
// 9, gorilla's websocket.PingMessage), without linking gorilla into every
// command that reads the reconnection status.
const pingMessage = 9

// PingConn is the connection a Liveness watches: gorilla's
// *websocket.Conn, the hub's connection to cloudcore (wsclient.Connected,
// the hook of patches/0017).
type PingConn interface {
	WriteControl(messageType int, data []byte, deadline time.Time) error
	SetPongHandler(h func(appData string) error)
	Close() error
}

// Liveness tells a hub connection that still reads and writes from one
// that still carries anything. A connection whose packets stop arriving (a
// link gone dark, a firewall or NAT that dropped the flow, a proxy that
// hangs) fails no read and no write for as long as TCP keeps retrying, 15
// minutes on Linux: edgeHub's heartbeat goes into the socket's buffer and
// cloudhub never answers it, so the node would stay away from its cloud
// without knowing. Every websocket server answers a ping with a pong while
// it reads (cloudhub's too), so a connection on which pings go unanswered
// for Timeout is over, and closing it makes edgeHub connect again.
type Liveness struct {
	// Period is how often a ping is sent; Timeout how long the
	// connection may stay without a pong.
	Period, Timeout time.Duration
	// Now and After are the clock; time.Now and time.After by default.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// Closed is told when the watch closed a silent connection, with how
	// long it had been silent (the node logs it).
	Closed func(silent time.Duration)
}

// LivenessForHeartbeat is the watch for a hub whose keepalive period is
// heartbeat (modules.edgeHub.heartbeat): a ping every third of it, and the
// connection over after two heartbeats without a pong, so that a cloud
// slowed down by a burst of work or a slow link (a pong seconds late) is
// not taken for a dead one. With the default of 15 s: a ping every 5 s, and
// a dead connection closed 30 to 35 s after its last pong.
func LivenessForHeartbeat(heartbeat time.Duration) Liveness {
	return Liveness{Period: max(heartbeat/3, time.Second), Timeout: max(2*heartbeat, 2*time.Second)}
}

// Watch pings conn until it closes it (it returns true) or a ping fails
// because the connection is gone (false: edgeHub sees that on its own). It
// must be called before anything is read from conn: it sets the pong
// handler.
func (l Liveness) Watch(conn PingConn) bool {
	now, after := l.Now, l.After
	if now == nil {
		now = time.Now
	}
	if after == nil {
		after = time.After
	}
	var last atomic.Int64
	last.Store(now().UnixNano())
	conn.SetPongHandler(func(string) error {
		last.Store(now().UnixNano())
		return nil
	})
	for {
		if err := conn.WriteControl(pingMessage, nil, now().Add(l.Period)); err != nil {
			return false
		}
		<-after(l.Period)
		if silent := now().Sub(time.Unix(0, last.Load())); silent > l.Timeout {
			conn.Close()
			if l.Closed != nil {
				l.Closed(silent)
			}
			return true
		}
	}
}
