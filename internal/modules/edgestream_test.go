package modules

import (
	"testing"

	"github.com/kubeedge/kubeedge/edge/pkg/edgestream"
	"github.com/kubeedge/kubeedge/pkg/stream"
)

// patches/0008: a tunnel message for an exec connection that has just
// ended (its read channel closed by the removal) is dropped; upstream's
// edgeStream panicked with "send on closed channel" and took the node
// down. Compiles and passes only against the patched graph.
func TestTunnelDropsAMessageForAnEndedConnection(t *testing.T) {
	s := edgestream.NewTunnelSession(nil)
	open := &stream.EdgedExecConnection{ReadChan: make(chan *stream.Message, 1), Stop: make(chan struct{}, 2), MessID: 1}
	ended := &stream.EdgedExecConnection{ReadChan: make(chan *stream.Message, 1), Stop: make(chan struct{}, 2), MessID: 2}
	s.AddLocalConnection(1, open)
	s.AddLocalConnection(2, ended)
	close(ended.ReadChan) // as DeleteLocalConnection does while the message is on its way

	s.WriteToLocalConnection(stream.NewMessage(2, stream.MessageTypeRemoveConnect, nil))
	// A live connection still gets its messages.
	s.WriteToLocalConnection(stream.NewMessage(1, stream.MessageTypeData, []byte("ls\n")))
	if m := <-open.ReadChan; string(m.Data) != "ls\n" {
		t.Errorf("the open connection got %q", m.Data)
	}
}
