package preflight

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	quic "github.com/lucas-clemente/quic-go"
)

// dialQUIC is the DialQUIC probe: a QUIC handshake with the same library
// and versions edgehub's QUIC client uses, closed as soon as it completes.
// cloudcore's QUIC server listens on UDP only, where nothing but an answer
// to a handshake proves that the port is open end to end. The server's
// certificate is not verified: the probe sends no data, and the clock row
// judges the certificates.
func dialQUIC(ctx context.Context, address string) error {
	timeout := DefaultTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	// #nosec G402 -- reachability only; nothing is sent over the session.
	tlsConf := &tls.Config{InsecureSkipVerify: true}
	// The context ends the handshake; quic-go's own timeout, a little
	// later, only keeps its default of 10s out of the way.
	sess, err := quic.DialAddrContext(ctx, address, tlsConf, &quic.Config{HandshakeTimeout: timeout + time.Second})
	if errors.Is(err, context.DeadlineExceeded) {
		// A closed UDP port sends nothing back, so silence is all there
		// is to report.
		return fmt.Errorf("no answer to a QUIC handshake within %v", timeout.Round(time.Second))
	}
	if err != nil {
		return err
	}
	return sess.Close()
}
