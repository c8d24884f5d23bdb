package join

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/crashlog"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/reconnect"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// What upstream edgehub (KubeEdge v1.23) reports and join waits for. The
// certificate manager panics with "failed to apply the edge certs, err:
// <cause>" when it cannot get the certificates with the token and the
// failure will not pass by waiting (v1.20 logged it and exited; a panic
// goes to standard error, which the service sends to panic.log, so join
// reads both); reconnect.ReadCertFailure reads the cause. While cloudcore
// does not answer, edgecore waits and tries again, and logs why once (an
// error line, which a time-out quotes).
// Once certificates exist, the hub client logs "Websocket connect to cloud
// access successful" (or "Quic connect ...") for each connection, and
// edgehub "connection failed: <cause>, will reconnect after ..." for each
// failed attempt.
const (
	logCertsFailed   = "failed to apply the edge certs"
	logConnected     = "connect to cloud access successful"
	logConnectFailed = "connection failed: "
)

// Timing of the wait.
const (
	pollInterval     = time.Second
	progressInterval = 15 * time.Second
	// tokenGrace is how long edgecore gets to blank the token itself
	// after writing the certificates, before join does it: two processes
	// replacing the same file at once can make one of them fail on
	// Windows.
	tokenGrace = 5 * time.Second
)

// logWatch follows the log file from an offset, line by line.
type logWatch struct {
	offset  int64
	partial []byte
	// connected is set once the hub has connected.
	connected bool
	// lastConnectErr and lastError are the latest failed connection and
	// the latest error line, quoted when the wait times out.
	lastConnectErr string
	lastError      string
}

// feed takes the next bytes of the log and returns the error for a
// certificate failure, if it contains one.
func (l *logWatch) feed(data []byte) error {
	l.partial = append(l.partial, data...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return nil
		}
		line := strings.TrimRight(string(l.partial[:i]), "\r")
		l.partial = l.partial[i+1:]
		severity, msg := klogMessage(line)
		switch {
		case strings.Contains(msg, logCertsFailed):
			return certFailure(msg)
		case strings.Contains(msg, logConnected):
			l.connected = true
		case strings.Contains(msg, logConnectFailed):
			l.lastConnectErr = msg
		}
		if severity == 'E' || severity == 'F' {
			l.lastError = msg
		}
	}
}

// klogMessage splits a klog line ("E0102 15:04:05.000000    1234
// file.go:83] message") into its severity letter and message. Other lines
// are returned whole with severity 0.
func klogMessage(line string) (byte, string) {
	if len(line) < 2 || !strings.ContainsRune("IWEF", rune(line[0])) || line[1] < '0' || line[1] > '9' {
		return 0, line
	}
	if i := strings.Index(line, "] "); i >= 0 {
		return line[0], line[i+2:]
	}
	return line[0], line
}

// certFailure explains why edgecore could not get its certificates, from
// the message it logged, with the fix.
func certFailure(msg string) error {
	switch reconnect.ReadCertFailure(msg) {
	case reconnect.CertCAMismatch:
		return steps.WithFix(fmt.Errorf("the token does not belong to this cloudcore: its CA certificate hash differs (%s)", msg),
			"run `keadm gettoken` against the cluster of this cloudcore and join with its output")
	case reconnect.CertTokenRejected:
		return steps.WithFix(fmt.Errorf("cloudcore rejected the token (%s)", msg),
			"the token is wrong or has expired (cloudcore renews it every 12 hours by default): run `keadm gettoken` on the cloud side and join with the new token")
	case reconnect.CertUnreachable, reconnect.CertNothingFetched, reconnect.CertServerError:
		return steps.WithFix(fmt.Errorf("edgecore could not fetch the CA certificate from cloudcore (%s)", msg),
			"check --certport and that cloudcore's certificate port is open in the firewalls of both hosts")
	}
	return steps.WithFix(fmt.Errorf("edgecore could not get the node certificates (%s)", msg),
		"correct what the message names, then run join again")
}

// logCause reads what edgecore has logged during this attempt and returns
// the certificate failure it reports, if any.
func (j *Join) logCause() error {
	if err := j.panicCause(); err != nil {
		return err
	}
	data, _, err := j.sys.FS.Tail(j.o.LogFile, j.logOffset)
	if err != nil {
		return nil
	}
	return (&logWatch{offset: j.logOffset}).feed(data)
}

func (j *Join) panicLog() string { return crashlog.PanicLogPathFor(j.goos, j.o.LogFile) }

// panicCause returns the certificate failure edgecore wrote to its panic
// log during this attempt, if any. Each start of edgecore moves a
// non-empty panic log aside and begins a new one, so a file that differs
// in size or time from the one seen before the service started is this
// attempt's.
func (j *Join) panicCause() error {
	info, err := j.sys.FS.Lstat(j.panicLog())
	if err != nil || info.Size() == 0 {
		return nil
	}
	if b := j.panicBefore; b != nil && b.Size() == info.Size() && b.ModTime().Equal(info.ModTime()) {
		return nil
	}
	data, _, err := j.sys.FS.Tail(j.panicLog(), 0)
	if err != nil {
		return nil
	}
	// The last line may lack its newline; feed reads whole lines.
	return (&logWatch{}).feed(append(data, '\n'))
}

func (j *Join) wait(ctx context.Context, out io.Writer) error {
	hub := j.cfg.Modules.EdgeHub
	clock := j.sys.Clock
	start := clock.Now()
	deadline := start.Add(j.o.Timeout)
	lastProgress := start
	log := &logWatch{offset: j.logOffset}
	// The signed part after the CA hash is the secret.
	_, secret, _ := strings.Cut(hub.Token, ".")
	var (
		certsAt        time.Time
		certs, tokenOK bool
		saidConnected  bool
		tokenErr       error
	)
	for {
		data, next, err := j.sys.FS.Tail(j.o.LogFile, log.offset)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", j.o.LogFile, err)
		}
		log.offset = next
		if err := log.feed(data); err != nil {
			return err
		}
		if err := j.panicCause(); err != nil {
			return err
		}
		now := clock.Now()
		if !certs {
			if certs, err = j.certificatesExist(); err != nil {
				return err
			}
			if certs {
				certsAt = now
				fmt.Fprintf(out, "certificates issued: %s, %s\n", hub.TLSCertFile, hub.TLSPrivateKeyFile)
			}
		}
		if certs && !tokenOK {
			raw, err := j.sys.FS.ReadFile(j.o.ConfigFile)
			switch {
			case err != nil:
				// edgecore may be replacing the file this very moment;
				// look again on the next poll.
				tokenErr = err
			case secret == "" || !bytes.Contains(raw, []byte(secret)):
				tokenOK = true
				fmt.Fprintf(out, "token removed from %s\n", j.o.ConfigFile)
			case now.Sub(certsAt) >= tokenGrace:
				// edgecore has not blanked it (yet); the certificates
				// exist, so the token must go now. A failure is tried
				// again on the next poll.
				tokenErr = j.sys.RemoveToken(j.o.ConfigFile)
			}
		}
		if log.connected && !saidConnected {
			saidConnected = true
			fmt.Fprintf(out, "edgehub connected to cloudcore at %s\n", j.hubAddr)
		}
		if certs && tokenOK && log.connected {
			return nil
		}
		if !now.Before(deadline) {
			return j.timedOut(certs, tokenOK, tokenErr, log)
		}
		if now.Sub(lastProgress) >= progressInterval {
			lastProgress = now
			fmt.Fprintf(out, "still waiting for %s (%v of %v)\n", waitingFor(certs, tokenOK, log.connected),
				now.Sub(start).Round(time.Second), j.o.Timeout)
		}
		if err := clock.Sleep(ctx, pollInterval); err != nil {
			return steps.WithFix(fmt.Errorf("interrupted while waiting: %w", err), "run the same join command again")
		}
	}
}

func (j *Join) certificatesExist() (bool, error) {
	hub := j.cfg.Modules.EdgeHub
	for _, f := range []string{hub.TLSCertFile, hub.TLSPrivateKeyFile} {
		ok, err := hostfs.Exists(j.sys.FS, f)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func waitingFor(certs, tokenOK, connected bool) string {
	var what []string
	if !certs {
		what = append(what, "the certificates")
	} else if !tokenOK {
		what = append(what, "the token to be removed")
	}
	if !connected {
		what = append(what, "the hub connection")
	}
	return strings.Join(what, " and ")
}

// timedOut says what did not happen in time, quoting the log.
func (j *Join) timedOut(certs, tokenOK bool, tokenErr error, log *logWatch) error {
	hub := j.cfg.Modules.EdgeHub
	var missing []string
	if !certs {
		missing = append(missing, fmt.Sprintf("the node certificates were not issued (%s does not exist)", hub.TLSCertFile))
	}
	if certs && !tokenOK {
		m := "the join token may still be in " + j.o.ConfigFile
		if tokenErr != nil {
			m += fmt.Sprintf(" (%v)", tokenErr)
		}
		missing = append(missing, m)
	}
	if !log.connected {
		m := "edgehub did not connect to cloudcore at " + j.hubAddr
		if log.lastConnectErr != "" {
			m += " (last attempt: " + log.lastConnectErr + ")"
		}
		missing = append(missing, m)
	}
	if log.lastError != "" && log.lastError != log.lastConnectErr {
		missing = append(missing, "the last error edgecore logged: "+log.lastError)
	}
	return steps.WithFix(fmt.Errorf("not ready after %v: %s", j.o.Timeout, strings.Join(missing, "; ")),
		fmt.Sprintf("check that this host reaches cloudcore at %s, read %s, and run join again (a longer --timeout helps on a slow link)",
			j.hubAddr, j.o.LogFile))
}
