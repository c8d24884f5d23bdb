package upgrade

import (
	"fmt"
	"strconv"
	"strings"
)

// Status is the first word of a result line.
type Status string

const (
	StatusSuccess    Status = "success"
	StatusUnchanged  Status = "unchanged"
	StatusRefused    Status = "refused"
	StatusAborted    Status = "aborted"
	StatusRolledBack Status = "rolled-back"
	StatusFailed     Status = "failed"
)

// Result is how an upgrade or rollback command ended, for people and for
// automation.
type Result struct {
	Status Status
	// Action is "upgrade" or "rollback".
	Action   Kind
	From, To string
	Reason   string
}

// Line is the last line the commands print, one key=value pair a word,
// values with spaces quoted as Go (and most shells) quote them:
//
//	result=success action=upgrade from=v0.1.0 to=v0.2.0
//	result=rolled-back action=upgrade from=v0.1.0 to=v0.2.0 reason="the service stopped (...)"
func (r Result) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "result=%s action=%s", r.Status, r.Action)
	for _, kv := range [][2]string{{"from", r.From}, {"to", r.To}, {"reason", r.Reason}} {
		if kv[1] == "" {
			continue
		}
		// One line, whatever the reason: errors listing several
		// problems put each on a line of its own.
		v := strings.Join(strings.Fields(strings.ReplaceAll(kv[1], "\n", " ")), " ")
		if strings.ContainsAny(v, " \t\"'=\\\n") || !strconv.IsPrint(rune(v[0])) {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", kv[0], v)
	}
	return b.String()
}

// ExitCode is the process exit code for the result: 0 when the host runs
// what was asked for (or already did), 1 when nothing was changed, 2 when
// the upgrade failed and the previous version runs again, 3 when even that
// failed and the operator must act.
func (r Result) ExitCode() int {
	switch r.Status {
	case StatusSuccess, StatusUnchanged:
		return 0
	case StatusRefused, StatusAborted:
		return 1
	case StatusRolledBack:
		return 2
	}
	return 3
}

// resultOf is the result a finished journal stands for.
func resultOf(j *Journal) Result {
	r := Result{Action: j.Kind, From: j.From, To: j.To, Reason: j.Reason}
	switch j.Outcome {
	case OutcomeSuccess:
		r.Status = StatusSuccess
	case OutcomeRolledBack:
		r.Status = StatusRolledBack
	case OutcomeAborted:
		r.Status = StatusAborted
	default:
		r.Status = StatusFailed
	}
	return r
}
