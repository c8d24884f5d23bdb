package join_test

import (
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

func TestLogWatchReadsLinesSplitAcrossReads(t *testing.T) {
	l := &join.LogWatch{}
	text := hosttest.LogLineNoHub + hosttest.LogLineConnected
	// Feed the log a few bytes at a time, as polls see a growing file.
	for i := 0; i < len(text); i += 7 {
		end := min(i+7, len(text))
		if err := l.Feed([]byte(text[i:end])); err != nil {
			t.Fatal(err)
		}
	}
	if !l.Connected() {
		t.Errorf("connection not seen")
	}
	if !strings.HasPrefix(l.LastConnectErr(), "connection failed: dial tcp 192.168.50.10:10000: i/o timeout") {
		t.Errorf("last connection error %q", l.LastConnectErr())
	}
	if l.LastError() != l.LastConnectErr() {
		t.Errorf("last error line %q", l.LastError())
	}
}

func TestLogWatchIgnoresAnUnfinishedLine(t *testing.T) {
	l := &join.LogWatch{}
	if err := l.Feed([]byte(strings.TrimSuffix(hosttest.LogLineRefused, "\n"))); err != nil {
		t.Fatalf("acted on half a line: %v", err)
	}
	if err := l.Feed([]byte("\n")); err == nil {
		t.Fatalf("the completed line was not seen")
	}
}

func TestCertificateFailuresAreExplained(t *testing.T) {
	for _, tc := range []struct {
		line, says, fix string
	}{
		{hosttest.LogLineRefused, "cloudcore rejected the token", "run `keadm gettoken` on the cloud side"},
		{"F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to get edge certificate from the cloudcore, error: failed to call http, code: 401, message: invalid authorization token\n",
			"cloudcore rejected the token", "has expired"},
		{hosttest.LogLineWrongCA, "the token does not belong to this cloudcore", "against the cluster of this cloudcore"},
		{"F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to get CA certificate, err: Get \"https://192.168.50.10:10002/ca.crt\": dial tcp: connect: connection refused\n",
			"could not fetch the CA certificate from cloudcore", "check --certport"},
		{"F0102 03:04:07.000000    4321 certmanager.go:83] failed to apply the edge certs, err: failed to save the CA certificate to file: C:\\etc\\kubeedge\\ca\\rootCA.crt, error: Access is denied.\n",
			"could not get the node certificates (failed to apply the edge certs, err: failed to save the CA certificate", "correct what the message names"},
	} {
		err := (&join.LogWatch{}).Feed([]byte(tc.line))
		fix := steps.Fix(err)
		if err == nil || fix == "" {
			t.Errorf("%s: no explained failure: %v", tc.line, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) || !strings.Contains(fix, tc.fix) {
			t.Errorf("%s:\n got %v (fix: %s)\nwant %q and fix %q", tc.line, err, fix, tc.says, tc.fix)
		}
		if strings.HasPrefix(strings.TrimPrefix(err.Error(), tc.says+" ("), "F0102") {
			t.Errorf("klog header kept in the message: %v", err)
		}
	}
}

func TestKlogMessage(t *testing.T) {
	for line, want := range map[string]struct {
		sev byte
		msg string
	}{
		"E0102 15:04:05.000000    1234 edgehub.go:105] connection failed: x": {'E', "connection failed: x"},
		"I0102 15:04:05.000000 1 a.go:1] ok":                                 {'I', "ok"},
		"plain text from somewhere":                                          {0, "plain text from somewhere"},
		"Error without a header] x":                                          {0, "Error without a header] x"},
	} {
		sev, msg := join.KlogMessage(line)
		if sev != want.sev || msg != want.msg {
			t.Errorf("%q: got %c %q", line, sev, msg)
		}
	}
}
