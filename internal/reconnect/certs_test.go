package reconnect

import "testing"

// The certificate manager's own wordings (KubeEdge v1.23.1), as a first
// start without the cloud, a wrong token and another cloud's CA produce
// them.
func TestReadCertFailure(t *testing.T) {
	for msg, want := range map[string]CertFailure{
		`failed to get CA certificate, err: Get "https://127.0.0.1:10902/ca.crt": dial tcp 127.0.0.1:10902: connect: connection refused`:     CertUnreachable,
		`failed to get CA certificate, err: Get "https://10.0.0.1:10002/ca.crt": context deadline exceeded`:                                  CertUnreachable,
		"failed to validate CA certificate. tokenCAhash: 3f6e2b1c, CAhash: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855": CertNothingFetched,
		"failed to validate CA certificate. tokenCAhash: 3f6e2b1c, CAhash: 9a1f00aa":                                                         CertCAMismatch,
		"failed to get edge certificate from the cloudcore, error: failed to request the cloudcore server, err: EOF":                         CertUnreachable,
		"failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: token validation failure":        CertTokenRejected,
		"failed to get edge certificate from the cloudcore, error: failed to call http, code: 403, message: forbidden":                       CertTokenRejected,
		"failed to get edge certificate from the cloudcore, error: failed to call http, code: 503, message: not ready":                       CertServerError,
		"failed to get edge certificate from the cloudcore, error: failed to call http, code: 404, message: not found":                       CertOther,
		"token abc credentials are in the wrong format":                                                                                      CertOther,
		"failed to save the CA certificate to file: C:\\etc\\kubeedge\\ca\\rootCA.crt, error: access denied":                                 CertOther,
	} {
		got := ReadCertFailure(msg)
		if got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
		if got.Transient() != (want == CertUnreachable || want == CertNothingFetched || want == CertServerError) {
			t.Errorf("%q: transient %v", msg, got.Transient())
		}
		if got.String() == "" {
			t.Errorf("%v has no description", got)
		}
	}
}
