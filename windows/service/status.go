package service

import (
	"fmt"
	"strings"
	"time"
)

// State is a service's current state. The values are Windows' SERVICE_*
// state numbers, so a state read from the service manager converts as is.
type State uint32

const (
	Stopped         State = 1
	StartPending    State = 2
	StopPending     State = 3
	Running         State = 4
	ContinuePending State = 5
	PausePending    State = 6
	Paused          State = 7
)

func (s State) String() string {
	switch s {
	case Stopped:
		return "stopped"
	case StartPending:
		return "starting"
	case StopPending:
		return "stopping"
	case Running:
		return "running"
	case ContinuePending:
		return "resuming"
	case PausePending:
		return "pausing"
	case Paused:
		return "paused"
	}
	return fmt.Sprintf("in unknown state %d", uint32(s))
}

// Exit codes the service reports when it stops (service-specific codes,
// shown by `sc.exe query edgecore` as SERVICE_EXIT_CODE). Any non-zero code
// makes the service manager apply the recovery actions, so a stop the
// operator asked for always reports ExitOK.
const (
	ExitOK uint32 = 0
	// ExitRunFailed: edgecore returned an error without being asked to stop.
	ExitRunFailed uint32 = 1
	// ExitUnexpectedStop: edgecore stopped by itself without an error, for
	// example after a module cancelled the process-wide context.
	ExitUnexpectedStop uint32 = 2
)

// Windows error numbers this package explains in words.
const (
	errnoAccessDenied           = 5
	errnoInvalidLevel           = 124
	errnoServiceAlreadyRunning  = 1056
	errnoServiceDisabled        = 1058
	errnoServiceCannotAcceptCtl = 1061
	errnoServiceNotActive       = 1062
	// The service manager's pipe to a process that is exiting: the
	// process is going away, which a later query shows as stopped.
	errnoBrokenPipe             = 109
	errnoNoData                 = 232
	errnoPipeNotConnected       = 233
	errnoServiceDoesNotExist    = 1060
	errnoServiceSpecificError   = 1066
	errnoServiceMarkedForDelete = 1072
	errnoServiceExists          = 1073
	errnoFailedServiceConnect   = 1063
	// A service the service depends on (containerd) failed to start, or
	// was uninstalled after the service was installed.
	errnoServiceDependencyFail    = 1068
	errnoServiceDependencyDeleted = 1075
)

// Status is what `edgecore.exe service status` reports.
type Status struct {
	Name      string
	Installed bool
	State     State
	StartType StartType
	// DelayedAutoStart is set for an automatic service that Windows starts
	// shortly after the other automatic services.
	DelayedAutoStart bool
	// ProcessID is the running service's process, 0 when stopped.
	ProcessID uint32
	// Win32ExitCode and ServiceExitCode are the codes of the last stop.
	Win32ExitCode   uint32
	ServiceExitCode uint32
	// CommandLine is what the service manager runs.
	CommandLine string
	// Dependencies are the services Windows starts before this one.
	Dependencies []string
	// Recovery is what the service manager does when the process dies;
	// nil when it could not be read.
	Recovery *Recovery
	// PreShutdownTimeout is how long a host shutdown waits for the
	// service after pre-shutdown; 0 when it could not be read.
	PreShutdownTimeout time.Duration
	// Environment is the service's own environment (the service key's
	// Environment value), nil when it has none or it could not be read.
	Environment []string
}

// Recovery is a service's failure actions as the service manager holds
// them: the restarts after each failure and when the count starts over.
type Recovery struct {
	RestartDelays      []time.Duration
	ResetFailuresAfter time.Duration
}

// String says the recovery actions in words, for example "recovery:
// restart at once, then after 5s, then 30s, then 60s; failure count reset
// after 24h".
func (r Recovery) String() string {
	if len(r.RestartDelays) == 0 {
		return "no recovery action: a crash leaves the service stopped (edgecore.exe service install sets restarts)"
	}
	delays := make([]string, len(r.RestartDelays))
	for i, d := range r.RestartDelays {
		switch {
		case d == 0:
			delays[i] = "at once"
		case i == 0 || r.RestartDelays[i-1] == 0:
			delays[i] = "after " + shortDuration(d)
		default:
			delays[i] = shortDuration(d)
		}
	}
	return "recovery: restart " + strings.Join(delays, ", then ") +
		"; failure count reset after " + shortDuration(r.ResetFailuresAfter)
}

// shortDuration writes whole hours, minutes or seconds the way sc.exe's
// users think of them: 24h, 5m, 60s.
func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= 2*time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// String says in words whether the service is installed and running, for
// example "installed, running (process 4242); start type automatic;
// depends on containerd".
func (s Status) String() string {
	if !s.Installed {
		return "not installed"
	}
	var b strings.Builder
	b.WriteString("installed, ")
	b.WriteString(s.State.String())
	if s.State == Running && s.ProcessID != 0 {
		fmt.Fprintf(&b, " (process %d)", s.ProcessID)
	}
	if s.State == Stopped {
		if why := exitDescription(s.Win32ExitCode, s.ServiceExitCode); why != "" {
			fmt.Fprintf(&b, " (%s)", why)
		}
	}
	b.WriteString("; start type ")
	b.WriteString(s.StartType.String())
	if s.StartType == StartAutomatic && s.DelayedAutoStart {
		b.WriteString(" (delayed)")
	}
	if len(s.Dependencies) > 0 {
		b.WriteString("; depends on ")
		b.WriteString(strings.Join(s.Dependencies, ", "))
	}
	if s.PreShutdownTimeout > 0 {
		fmt.Fprintf(&b, "; a host shutdown waits up to %s for it", shortDuration(s.PreShutdownTimeout))
	}
	if s.Recovery != nil {
		b.WriteString("; ")
		b.WriteString(s.Recovery.String())
	}
	return b.String()
}

// exitDescription explains the exit codes of a stopped service, or returns
// "" for a clean stop.
func exitDescription(win32, specific uint32) string {
	if win32 == 0 {
		return ""
	}
	if win32 != errnoServiceSpecificError {
		return fmt.Sprintf("last stop: Windows error %d", win32)
	}
	switch specific {
	case ExitRunFailed:
		return fmt.Sprintf("last run failed with exit code %d; see the log file", specific)
	case ExitUnexpectedStop:
		return fmt.Sprintf("last run stopped by itself with exit code %d; see the log file", specific)
	}
	return fmt.Sprintf("last run ended with exit code %d", specific)
}
