package reconnect

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fakeConn answers pings with pongs while answering is set, as a live
// server does, and records what the watch did.
type fakeConn struct {
	mu        sync.Mutex
	answering bool
	pong      func(string) error
	pings     int
	closed    bool
	gone      bool
}

func (c *fakeConn) WriteControl(messageType int, _ []byte, _ time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if messageType != websocket.PingMessage {
		return errors.New("not a ping")
	}
	if c.gone || c.closed {
		return errors.New("use of closed network connection")
	}
	c.pings++
	if c.answering {
		c.pong("")
	}
	return nil
}

func (c *fakeConn) SetPongHandler(h func(string) error) { c.pong = h }
func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// clock is a manual clock: each wait of the watch moves it on.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }
func (c *clock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func TestLivenessClosesAConnectionWithoutPongs(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	conn := &fakeConn{}
	var silent time.Duration
	l := LivenessForHeartbeat(15 * time.Second)
	l.Now, l.After, l.Closed = clk.Now, clk.After, func(d time.Duration) { silent = d }
	if !l.Watch(conn) {
		t.Fatal("Watch returned false for a connection it should have closed")
	}
	if !conn.closed {
		t.Fatal("the silent connection was not closed")
	}
	// Pings every 5 s; closed at the first look after 30 s of silence.
	if silent != 35*time.Second || conn.pings != 7 {
		t.Errorf("closed after %v of silence and %d pings, want 35s and 7", silent, conn.pings)
	}
}

func TestLivenessKeepsAnAnsweringConnection(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	conn := &fakeConn{answering: true}
	l := LivenessForHeartbeat(15 * time.Second)
	l.Now = clk.Now
	// The connection answers for ten minutes, then goes away (the hub
	// closed it): the watch ends without closing it.
	l.After = func(d time.Duration) <-chan time.Time {
		if clk.now.Sub(time.Unix(1000, 0)) >= 10*time.Minute {
			conn.mu.Lock()
			conn.gone = true
			conn.mu.Unlock()
		}
		return clk.After(d)
	}
	if l.Watch(conn) {
		t.Fatal("Watch closed a connection that answered every ping")
	}
	if conn.closed || conn.pings < 100 {
		t.Errorf("closed %v after %d pings, want open after 120", conn.closed, conn.pings)
	}
}

func TestLivenessToleratesALatePong(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	conn := &fakeConn{}
	l := LivenessForHeartbeat(15 * time.Second)
	l.Now = clk.Now
	// Pongs stop for 25 s (a slow link, a busy cloud), then come again;
	// then the connection goes away.
	l.After = func(d time.Duration) <-chan time.Time {
		elapsed := clk.now.Sub(time.Unix(1000, 0))
		conn.mu.Lock()
		conn.answering = elapsed < 10*time.Second || elapsed >= 35*time.Second
		conn.gone = elapsed >= 2*time.Minute
		conn.mu.Unlock()
		return clk.After(d)
	}
	if l.Watch(conn) || conn.closed {
		t.Fatal("Watch closed a connection whose pongs were 25 s late, under the 30 s timeout")
	}
}

func TestPingMessageIsGorillas(t *testing.T) {
	if pingMessage != websocket.PingMessage {
		t.Fatalf("pingMessage %d, gorilla's websocket.PingMessage %d", pingMessage, websocket.PingMessage)
	}
}
