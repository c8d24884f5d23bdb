package reconnect

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// CertFailure is why a node could not get its first certificates with its
// join token, read from the error upstream's certificate manager
// (KubeEdge v1.23, edgehub/certificate) gives: one reading, for the node
// that decides whether to wait and try again, and for join, which tells
// the operator the fix.
type CertFailure int

const (
	// CertOther is a failure this reading does not know: the node gives
	// up on it, as upstream does.
	CertOther CertFailure = iota
	// CertUnreachable: the certificate port did not answer, or the
	// connection failed before cloudcore answered ("failed to get CA
	// certificate", "failed to request the cloudcore server"). The cloud
	// may not be there yet.
	CertUnreachable
	// CertNothingFetched: something answered on the certificate port
	// with no CA certificate at all, so the CA's hash is the hash of
	// nothing (e3b0c442...): a cloudcore still starting, or a proxy.
	CertNothingFetched
	// CertServerError: cloudcore answered with a server error (5xx).
	CertServerError
	// CertCAMismatch: a CA certificate came, and its hash is not the
	// one the token names: the token belongs to another cloudcore, or
	// another server answers in its place.
	CertCAMismatch
	// CertTokenRejected: cloudcore refused the token (401, 403, "token
	// validation failure").
	CertTokenRejected
)

// The wordings of upstream's certificate manager and cloudcore.
const (
	logCAUnavailable = "failed to get CA certificate"
	logRequestFailed = "failed to request the cloudcore server"
	logCAMismatch    = "failed to validate CA certificate"
	logTokenRejected = "token validation failure"
	logHTTPCode      = "failed to call http, code: "
)

// emptyHash is the SHA-256 of nothing, which upstream reports as the CA's
// hash when it fetched an empty body.
var emptyHash = func() string { h := sha256.Sum256(nil); return hex.EncodeToString(h[:]) }()

// ReadCertFailure reads the certificate manager's error message.
func ReadCertFailure(msg string) CertFailure {
	switch {
	case strings.Contains(msg, logCAMismatch):
		if strings.Contains(msg, "CAhash: "+emptyHash) {
			return CertNothingFetched
		}
		return CertCAMismatch
	case strings.Contains(msg, logTokenRejected):
		return CertTokenRejected
	case strings.Contains(msg, logHTTPCode):
		code := msg[strings.Index(msg, logHTTPCode)+len(logHTTPCode):]
		switch {
		case strings.HasPrefix(code, "401"), strings.HasPrefix(code, "403"):
			return CertTokenRejected
		case strings.HasPrefix(code, "5"):
			return CertServerError
		}
		return CertOther
	case strings.Contains(msg, logCAUnavailable), strings.Contains(msg, logRequestFailed):
		return CertUnreachable
	}
	return CertOther
}

// Transient reports whether the cloud may still answer: the node then
// waits and tries again rather than ending. A refused token or another
// cloud's CA stays wrong however long the node waits; join reports those.
func (f CertFailure) Transient() bool {
	return f == CertUnreachable || f == CertNothingFetched || f == CertServerError
}

// String says what the failure means, for the node's log and `service
// status`.
func (f CertFailure) String() string {
	switch f {
	case CertUnreachable:
		return "cloudcore's certificate port does not answer"
	case CertNothingFetched:
		return "cloudcore's certificate port answered without a CA certificate"
	case CertServerError:
		return "cloudcore's certificate port answered with a server error"
	case CertCAMismatch:
		return "the CA certificate cloudcore served is not the one the join token names"
	case CertTokenRejected:
		return "cloudcore refused the join token"
	}
	return "the node could not get its certificates"
}
