// Package service installs, controls and runs edgecore as a native Windows
// service. What the service looks like (its name, start type, recovery
// actions, command line) and how the process answers the service manager
// are decided in OS-neutral code here, so that they are tested on any
// build host; the files ending in _windows.go only pass those decisions to
// golang.org/x/sys/windows/svc and svc/mgr.
package service

import (
	"fmt"

	"github.com/kubeedge-windows/edgecore/windows/eventlog"
	"math"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// DefaultName is the service name: what `sc.exe query edgecore` and
// `Get-Service edgecore` use.
const DefaultName = "edgecore"

// The command every fix in an error message names. The service exists only
// on Windows, so the Windows name of the binary is the one an operator types.
const cli = "edgecore.exe"

// StartType says when the service manager starts the service. The values
// are Windows' SERVICE_*_START numbers.
type StartType uint32

const (
	StartBoot      StartType = 0 // drivers only
	StartSystem    StartType = 1 // drivers only
	StartAutomatic StartType = 2 // at boot
	StartManual    StartType = 3 // on request
	StartDisabled  StartType = 4 // never
)

func (t StartType) String() string {
	switch t {
	case StartBoot:
		return "boot"
	case StartSystem:
		return "system"
	case StartAutomatic:
		return "automatic"
	case StartManual:
		return "manual"
	case StartDisabled:
		return "disabled"
	}
	return fmt.Sprintf("unknown (%d)", uint32(t))
}

// Config describes the service that `edgecore.exe service install` creates.
type Config struct {
	// Name is the service (key) name.
	Name string
	// DisplayName is what services.msc lists.
	DisplayName string
	// Description is shown in the service's properties.
	Description string
	// StartType is StartAutomatic for a node that comes back after a reboot.
	StartType StartType
	// Executable is the absolute path of edgecore.exe.
	Executable string
	// Args follow the executable on the service's command line.
	Args []string
	// RestartDelays are the recovery actions: after the first failure the
	// service manager restarts the service after RestartDelays[0] (0: at
	// once), after the second after RestartDelays[1], and so on; the last
	// delay repeats for every further failure.
	RestartDelays []time.Duration
	// ResetFailuresAfter is how long the service has to run without failing
	// before the service manager counts failures from the first delay again.
	ResetFailuresAfter time.Duration
	// RestartOnErrorExit applies the recovery actions also when the service
	// reports stopped with a non-zero exit code (edgecore returned an error
	// or stopped by itself), not only when the process crashes.
	RestartOnErrorExit bool
	// RuntimeService is the container runtime's service. When it is
	// installed, the service depends on it, so that Windows starts it
	// first at boot; when it is not, Install warns and installs the
	// service without the dependency. Empty: no dependency.
	RuntimeService string
	// PreShutdownTimeout is how long Windows waits at a host shutdown for
	// the service to stop after the pre-shutdown notification, before it
	// goes on shutting down: PreShutdownTimeoutFor the node's shutdown
	// grace periods. Zero leaves Windows' default (10 s since Windows 10
	// 1703 and Server 2019, 3 minutes before).
	PreShutdownTimeout time.Duration
	// EventSource is the Application log source Install registers for
	// the service (eventlog.Source for edgecore; "" for none). Uninstall
	// of DefaultName removes it.
	EventSource string
	// Environment are NAME=value lines the service manager gives the
	// service's process (the service key's Environment value): join's
	// proxy settings. Empty: the service inherits the system's.
	Environment []string
}

// DefaultRuntimeService is containerd's service name, as `containerd.exe
// --register-service` installs it.
const DefaultRuntimeService = "containerd"

// reportMargin is the time left, after the service's bounded stop, for
// its stopped report to reach the service manager.
const reportMargin = 5 * time.Second

// PreShutdownTimeout is the bound of a host shutdown's wait for edgecore
// when the node stops no pods first: the service's own StopTimeout, after
// which it reports stopped whether or not the graceful shutdown has
// finished, plus a margin for that report to reach the service manager.
// Windows' default of 10 s would cut the graceful shutdown short.
const PreShutdownTimeout = StopTimeout + reportMargin

// PreShutdownTimeoutFor is how long a host shutdown must wait for the
// service when the node first stops its pods for up to nodeShutdown (the
// kubelet's shutdown grace periods, summed): those, NodeShutdownSlack for
// the kubelet's own work around them, then PreShutdownTimeout.
func PreShutdownTimeoutFor(nodeShutdown time.Duration) time.Duration {
	if nodeShutdown <= 0 {
		return PreShutdownTimeout
	}
	return nodeShutdown + NodeShutdownSlack + PreShutdownTimeout
}

// PreShutdownError says that Windows waits less for the service at a host
// shutdown than the node's shutdown needs.
type PreShutdownError struct {
	// Service is the service's name.
	Service string
	// Given is the pre-shutdown time-out the service manager holds.
	Given time.Duration
	// Grace is the node's shutdown grace periods, summed; Field is the
	// configuration field they come from.
	Grace time.Duration
	Field string
}

// Need is the time-out the node's shutdown needs.
func (e *PreShutdownError) Need() time.Duration { return PreShutdownTimeoutFor(e.Grace) }

// Detail says what is short, by how much and why.
func (e *PreShutdownError) Detail() string {
	if e.Grace <= 0 {
		return fmt.Sprintf("a host shutdown waits only %v for the %s service, which needs %v for edgecore's own stop",
			e.Given, e.Service, e.Need())
	}
	return fmt.Sprintf("%s asks for %v to stop the node's pods at a host shutdown, but Windows waits only %v for the %s service, "+
		"which needs %v: the pods' %v, %v for the kubelet around them and %v for edgecore's own stop",
		e.Field, e.Grace, e.Given, e.Service, e.Need(), e.Grace, NodeShutdownSlack, PreShutdownTimeout)
}

// Fix is the one-line fix.
func (e *PreShutdownError) Fix() string {
	fix := fmt.Sprintf("run `%s service uninstall`, then `%s service install`, which sets the time-out from the configuration", cli, cli)
	if e.Grace > 0 {
		fix += ", or lower " + e.Field
	}
	return fix
}

func (e *PreShutdownError) Error() string { return e.Detail() + "; fix: " + e.Fix() }

// CheckPreShutdown returns a *PreShutdownError when given, the
// pre-shutdown time-out the service manager gives the service, is shorter
// than a node whose shutdown grace periods (from the configuration field
// field) sum to grace needs: PreShutdownTimeoutFor(grace).
func CheckPreShutdown(service string, given, grace time.Duration, field string) error {
	if given >= PreShutdownTimeoutFor(grace) {
		return nil
	}
	return &PreShutdownError{Service: service, Given: given, Grace: grace, Field: field}
}

// DefaultConfig is the service for edgecore.exe at executable reading the
// configuration file configFile, whose node stops its pods for up to
// nodeShutdown at a host shutdown (0: it stops none). It restarts at once
// after a first failure, then after 5 s, 30 s and every 60 s: a one-off
// crash costs no time, while cloudcore or a configuration that keeps it
// failing does not fill the log with start-ups. After a day without
// failures the back-off starts over. It depends on containerd's service
// when that is installed, and a host shutdown waits up to
// PreShutdownTimeoutFor(nodeShutdown) for it.
func DefaultConfig(executable, configFile string, nodeShutdown time.Duration) Config {
	return Config{
		Name:               DefaultName,
		DisplayName:        "KubeEdge edgecore",
		Description:        "KubeEdge edge node agent: runs the node's pods and keeps it connected to cloudcore.",
		StartType:          StartAutomatic,
		Executable:         executable,
		Args:               []string{"--config", configFile},
		RestartDelays:      []time.Duration{0, 5 * time.Second, 30 * time.Second, 60 * time.Second},
		ResetFailuresAfter: 24 * time.Hour,
		RestartOnErrorExit: true,
		RuntimeService:     DefaultRuntimeService,
		PreShutdownTimeout: PreShutdownTimeoutFor(nodeShutdown),
		EventSource:        eventlog.Source,
	}
}

// Limits of the service manager: names and display names are at most 256
// characters, delays are milliseconds and the reset period seconds in
// 32-bit fields.
const (
	maxNameLen = 256
	maxDelay   = time.Duration(math.MaxUint32) * time.Millisecond
	maxReset   = time.Duration(math.MaxUint32) * time.Second
	minDelay   = time.Second
	minReset   = time.Second
)

// Validate reports the first field the service manager would refuse or
// that would make a useless service, naming the field and the fix.
func (c Config) Validate() error {
	if err := validateName(c.Name); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(c.DisplayName); n > maxNameLen {
		return fmt.Errorf("service DisplayName is %d characters long; Windows allows at most %d", n, maxNameLen)
	}
	if strings.IndexByte(c.DisplayName, 0) >= 0 || strings.IndexByte(c.Description, 0) >= 0 {
		return fmt.Errorf("service DisplayName or Description contains a NUL character; remove it")
	}
	switch c.StartType {
	case StartAutomatic, StartManual, StartDisabled:
	default:
		return fmt.Errorf("service StartType %s is not one a program service can use; use automatic, manual or disabled", c.StartType)
	}
	if _, err := CommandLine(c.Executable, c.Args); err != nil {
		return err
	}
	if len(c.RestartDelays) == 0 {
		return fmt.Errorf("service RestartDelays is empty; give at least one delay so that a crashed edgecore is restarted")
	}
	last := len(c.RestartDelays) - 1
	for i, d := range c.RestartDelays {
		if d < 0 || d > maxDelay {
			return fmt.Errorf("service RestartDelays[%d] is %v; each restart delay must be between 0s and %v", i, d, maxDelay)
		}
		// The last delay repeats for every further failure: at 0 a
		// configuration that keeps failing would restart in a tight loop.
		if i == last && d < minDelay {
			return fmt.Errorf("service RestartDelays[%d] is %v; the last delay repeats for every further failure, so it must be at least %v", i, d, minDelay)
		}
	}
	if c.ResetFailuresAfter < minReset || c.ResetFailuresAfter > maxReset {
		return fmt.Errorf("service ResetFailuresAfter is %v; it must be between %v and %v", c.ResetFailuresAfter, minReset, maxReset)
	}
	if c.RuntimeService != "" {
		if err := validateName(c.RuntimeService); err != nil {
			return fmt.Errorf("service RuntimeService: %w", err)
		}
		if strings.EqualFold(c.RuntimeService, c.Name) {
			return fmt.Errorf("service RuntimeService is %q, the service itself; a service cannot depend on itself", c.RuntimeService)
		}
	}
	if err := validateEnvironment(c.Environment); err != nil {
		return err
	}
	// A time-out below StopTimeout would let Windows shut down while the
	// graceful shutdown still runs.
	if c.PreShutdownTimeout != 0 && (c.PreShutdownTimeout < StopTimeout || c.PreShutdownTimeout > maxDelay) {
		return fmt.Errorf("service PreShutdownTimeout is %v; it must be 0 (Windows' default) or between the graceful stop's %v and %v: "+
			"lower the node's shutdown grace periods (modules.edged.tailoredKubeletConfig.shutdownGracePeriod)",
			c.PreShutdownTimeout, StopTimeout, maxDelay)
	}
	return nil
}

// validateEnvironment checks that each line is NAME=value as the service
// manager's Environment value holds them: a name without = or NUL, no NUL
// in the value. The message names the variable, never its value (a proxy
// URL may carry a password).
func validateEnvironment(env []string) error {
	for i, line := range env {
		name, _, ok := strings.Cut(line, "=")
		if !ok || name == "" || strings.ContainsAny(line, "\x00\r\n") {
			if !ok {
				name = fmt.Sprintf("line %d", i+1)
			}
			return fmt.Errorf("service Environment %s is not NAME=value on one line without NUL; correct it", name)
		}
	}
	return nil
}

// dependencies decides which services the service depends on: the
// container runtime's, if installed reports it installed. A runtime that is
// not installed gives a warning instead, naming what that means and the
// fix.
func (c Config) dependencies(installed func(name string) (bool, error)) (deps, warnings []string, err error) {
	if c.RuntimeService == "" {
		return nil, nil, nil
	}
	ok, err := installed(c.RuntimeService)
	if err != nil {
		return nil, nil, fmt.Errorf("looking for the container runtime's service %q: %w", c.RuntimeService, err)
	}
	if ok {
		return []string{c.RuntimeService}, nil, nil
	}
	return nil, []string{runtimeNotInstalled(c.Name, c.RuntimeService)}, nil
}

// stringBlock is a list as the service manager takes it: each string
// followed by NUL, and one more NUL at the end.
func stringBlock(list []string) []uint16 {
	var b []uint16
	for _, s := range list {
		b = append(b, utf16.Encode([]rune(s))...)
		b = append(b, 0)
	}
	return append(b, 0)
}

// runtimeNotInstalled is the warning for a service installed without its
// dependency on the container runtime.
func runtimeNotInstalled(name, runtime string) string {
	return fmt.Sprintf("the service %q is not installed, so %q does not depend on it: at boot edgecore may start before the container runtime "+
		"and retries until the runtime answers. Once %s runs as a service, make %s start after it: "+
		"`%s service uninstall` and `%s service install` again, or `sc.exe config %s depend= %s`",
		runtime, name, runtime, name, cli, cli, name, runtime)
}

// validateName applies the service manager's rules for a service name,
// which also guard the name an operator passes to `service status`.
func validateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("service name is empty; the default is %q", DefaultName)
	case utf8.RuneCountInString(name) > maxNameLen:
		return fmt.Errorf("service name %q is longer than %d characters", name, maxNameLen)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("service name %q contains a slash or backslash, which Windows does not allow in service names", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("service name %q contains a control character", name)
		}
	}
	return nil
}

// CommandLine is the command line the service manager runs for c.
func (c Config) CommandLine() (string, error) {
	return CommandLine(c.Executable, c.Args)
}

// ResetPeriodSeconds is ResetFailuresAfter in the unit the service manager
// takes, rounded down to whole seconds. Call Validate first.
func (c Config) ResetPeriodSeconds() uint32 {
	return uint32(c.ResetFailuresAfter / time.Second)
}
