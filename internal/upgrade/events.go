package upgrade

import (
	"fmt"

	"github.com/kubeedge-windows/edgecore/windows/eventlog"
)

// eventOf is the Application log event a finished journal writes
// (docs/service.md): an upgrade (104), a rollback (105) or a takeover
// (106), whoever drove it (the command, a NodeUpgradeJob's helper, the
// edgecore that resumed it). The id says what was done and the level how
// it ended: Information when it succeeded (a rollback is always a
// Warning), Warning when the previous installation runs again, Error when
// the operator must act. A configuration journal (ConfigUpdateJob) writes
// none: its job status carries the outcome.
func eventOf(e Env, j *Journal) (eventlog.Kind, eventlog.Level, string, bool) {
	job := ""
	if j.Job != nil && j.Job.TaskID != "" {
		job = fmt.Sprintf(" (NodeUpgradeJob task %s)", j.Job.TaskID)
	}
	detail := fmt.Sprintf(" The command's output or the job's status has each step; the log file %s has the service's side.", e.Paths.NodeLogFile)
	switch {
	case j.Kind == KindUpgrade && j.Takeover:
		what := fmt.Sprintf("The takeover of the service %s from %s's installation by edgecore %s%s", j.Service, j.From, j.To, job)
		switch j.Outcome {
		case OutcomeSuccess:
			return eventlog.Takeover, eventlog.Information, fmt.Sprintf("%s succeeded: the service runs %s with the node's certificates, database and containers. "+
				"%s's binary, configuration and database are kept in %s: `edgecore.exe rollback` goes back to them.", what, j.Executable, j.From, j.Backup), true
		case OutcomeRolledBack:
			return eventlog.Takeover, eventlog.Warning, fmt.Sprintf("%s failed and was undone: %s. The service runs %s's installation again, as before.%s", what, j.Reason, j.From, detail), true
		case OutcomeAborted:
			return eventlog.Takeover, eventlog.Warning, fmt.Sprintf("%s was abandoned before anything was replaced: %s. The service runs %s's installation, as before.%s", what, j.Reason, j.From, detail), true
		}
		return eventlog.Takeover, eventlog.Error, fmt.Sprintf("%s failed, and so did putting %s's installation back: %s. Its backup is in %s.%s", what, j.From, j.Reason, j.Backup, detail), true
	case j.Kind == KindUpgrade:
		what := fmt.Sprintf("The upgrade of edgecore from %s to %s%s", j.From, j.To, job)
		switch j.Outcome {
		case OutcomeSuccess:
			return eventlog.Upgrade, eventlog.Information, fmt.Sprintf("%s succeeded: the service %s runs %s and passed the health check. "+
				"%s is backed up in %s: `edgecore.exe rollback` goes back to it.", what, j.Service, j.To, j.From, j.Backup), true
		case OutcomeRolledBack:
			return eventlog.Upgrade, eventlog.Warning, fmt.Sprintf("%s failed and was rolled back: %s. The service %s runs %s again.%s", what, j.Reason, j.Service, j.From, detail), true
		case OutcomeAborted:
			return eventlog.Upgrade, eventlog.Warning, fmt.Sprintf("%s was abandoned before anything was replaced: %s. The service %s runs %s.%s", what, j.Reason, j.Service, j.From, detail), true
		}
		return eventlog.Upgrade, eventlog.Error, fmt.Sprintf("%s failed, and so did its rollback: %s. Which version runs is not known.%s", what, j.Reason, detail), true
	case j.Kind == KindRollback:
		what := fmt.Sprintf("The rollback of edgecore from %s to %s%s", j.From, j.To, job)
		switch j.Outcome {
		case OutcomeSuccess:
			return eventlog.Rollback, eventlog.Warning, fmt.Sprintf("%s succeeded: the service %s runs %s again, restored from %s.", what, j.Service, j.To, j.Backup), true
		case OutcomeAborted:
			return eventlog.Rollback, eventlog.Warning, fmt.Sprintf("%s was abandoned before anything was restored: %s. The service %s runs %s.%s", what, j.Reason, j.Service, j.From, detail), true
		}
		return eventlog.Rollback, eventlog.Error, fmt.Sprintf("%s failed: %s. Which version runs is not known.%s", what, j.Reason, detail), true
	}
	return 0, 0, "", false
}
