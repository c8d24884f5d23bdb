// Package servicectl carries out the `edgecore.exe service` commands that
// span more than the service manager: install, which also restricts the
// node's directories and refuses an executable others may change; status, which also points at a panic log a crash left;
// and dump, which finds the service's process, asks it for its goroutine
// stacks and waits for the file. Every effect on the host goes through a
// System, so these are tested with fakes on any build host; only the wait
// for the new dump reads the log directory itself (a temporary one in the
// tests).
package servicectl

import (
	"github.com/kubeedge-windows/edgecore/config/proxyenv"

	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/crashlog"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/reconnect"
	"github.com/kubeedge-windows/edgecore/windows/service"
	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

// The command every fix names.
const cli = "edgecore.exe"

// Name is the edgecore service's name, which the commands control.
const Name = service.DefaultName

// System is what the service commands do to the host.
type System struct {
	Query     func(name string) (service.Status, error)
	Install   func(c service.Config) (warnings []string, err error)
	Uninstall func(name string) error
	// Protect reads and sets the owners and ACLs of the node's files,
	// and creates its directories with theirs (protect.HostACLs).
	Protect protect.Host
	// Signal sets the named event.
	Signal func(event string) error
	// PanicLogs lists the non-empty panic logs beside a log file.
	PanicLogs func(logFile string) ([]crashlog.File, error)
	// StackDumps lists the finished stack dumps of a process in dir.
	StackDumps func(dir string, pid uint32) (map[string]bool, error)
	// GOOS is the host's, for the paths beside the log file.
	GOOS string
	// ReadFile reads a file (the hub's status beside the log); nil
	// leaves the hub's status out.
	ReadFile func(path string) ([]byte, error)
	Now      func() time.Time
}

// HostSystem is this host's service manager, files and events.
func HostSystem(d *deps.Dependencies) System {
	return System{
		Query:      d.Services.Query,
		Install:    d.Services.Install,
		Uninstall:  d.Services.Uninstall,
		Protect:    d.ACLs,
		Signal:     stackdump.Signal,
		PanicLogs:  crashlog.PanicLogs,
		StackDumps: crashlog.StackDumps,
		GOOS:       d.Host.GOOS,
		ReadFile:   d.FS.ReadFile,
		Now:        d.Clock.Now,
	}
}

// elevate is the fix for what only SYSTEM and Administrators may do.
func elevate(command string) string {
	return fmt.Sprintf("run `%s %s` from a PowerShell or command prompt started with \"Run as administrator\"", cli, command)
}

// Install installs the service c and applies protect's description to
// the node's directories and files (targets, from protect.Targets): the
// log directory, where the service writes its log, panic log and stack
// dumps, is created first, with its parents, protected from their
// creation (protect.Create). Before anything changes, it refuses an
// edgecore.exe in a directory others may change (the service would run
// as SYSTEM whatever they put there), a node directory or file another
// account owns, and a parent of one another account owns or may rename,
// each with its fix. If the directories cannot be restricted the service
// is removed again, so that install can simply be run again.
func Install(c service.Config, logDir string, targets []protect.Target, sys System) (warnings []string, repairs []protect.Repair, err error) {
	if err := protect.Check(targets, sys.Protect, protect.Adopting); err != nil {
		return nil, nil, fmt.Errorf("install service %q: %w", c.Name, err)
	}
	warnings, err = sys.Install(c)
	if err != nil {
		return warnings, nil, err
	}
	// A service is a Windows service: the paths are Windows paths.
	_, err = protect.Create(config.Windows, targets, logDir, sys.Protect)
	if err == nil {
		repairs, err = protect.Enforce(targets, sys.Protect, protect.Adopting)
	}
	if err == nil {
		return warnings, repairs, nil
	}
	err = fmt.Errorf("install service %q: restricting its directories to SYSTEM and Administrators: %w", c.Name, err)
	if uerr := sys.Uninstall(c.Name); uerr != nil {
		return warnings, nil, fmt.Errorf("%v; removing the service again also failed (%v): remove it with `%s service uninstall`", err, uerr, cli)
	}
	return warnings, nil, fmt.Errorf("%w; the service was removed again: make sure %s is a directory on an NTFS volume, not a link, then run `%s service install` again",
		err, logDir, cli)
}

// Status says whether the service is installed and running, whether the
// running service is connected to cloudcore and, if not, why (the status
// the node records beside logFile, reconnect.Status), and lists the
// non-empty panic logs beside logFile, each with its size and time: a
// service that crashed and was restarted by its recovery actions looks
// healthy otherwise.
func Status(name, logFile string, sys System) (string, error) {
	st, err := sys.Query(name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", name, st)
	if env := proxyenv.Of(st.Environment); len(env) > 0 {
		// join's --proxy, as the service manager gives it the process;
		// a proxy password is never shown.
		fmt.Fprintf(&b, "environment: %s\n", strings.Join(env, " "))
	}
	if st.State == service.Running && sys.ReadFile != nil {
		hub, ok, err := reconnect.ReadStatus(sys.ReadFile, reconnect.StatusPath(sys.GOOS, logFile))
		switch {
		case errors.Is(err, fs.ErrPermission):
			fmt.Fprintf(&b, "cloud: %s is open to Administrators only; to see whether the node is connected, %s\n",
				filepath.Dir(logFile), elevate("service status"))
		case err != nil:
			fmt.Fprintf(&b, "cloud: cannot tell: %v\n", err)
		case ok:
			if d := hub.Describe(st.ProcessID, sys.Now()); d != "" {
				fmt.Fprintf(&b, "cloud: %s\n", d)
			}
		}
	}
	found, err := sys.PanicLogs(logFile)
	switch {
	case errors.Is(err, fs.ErrPermission):
		// The log directory is open to SYSTEM and Administrators only.
		fmt.Fprintf(&b, "panic log: %s is open to Administrators only; to see whether edgecore left a panic log, %s\n",
			filepath.Dir(logFile), elevate("service status"))
	case err != nil:
		fmt.Fprintf(&b, "panic log: cannot look for it: %v\n", err)
	}
	for _, f := range found {
		fmt.Fprintf(&b, "panic log %s: edgecore crashed or printed an error there; read it (and the log file around that time), then delete it\n", f)
	}
	return b.String(), nil
}

// Dump bounds: how long `service dump` waits for the file, and how often
// it looks.
const (
	DumpTimeout = 15 * time.Second
	dumpPoll    = 100 * time.Millisecond
)

// Dump asks the running service name for its goroutine stacks through its
// event Global\stackdump-<pid> and waits up to timeout for the file to
// appear beside logFile. It returns the file's path.
func Dump(ctx context.Context, name, logFile string, timeout time.Duration, sys System) (string, error) {
	st, err := sys.Query(name)
	if err != nil {
		return "", err
	}
	switch {
	case !st.Installed:
		return "", fmt.Errorf("dump service %q: the service is %w; install it with `%s service install` (or `%s join`)",
			name, service.ErrNotInstalled, cli, cli)
	case st.State != service.Running || st.ProcessID == 0:
		return "", fmt.Errorf("dump service %q: it is %s, not running; a stack dump comes from the running process: start it with `%s service start`, "+
			"and if it crashed, `%s service status` names its panic log", name, st.State, cli, cli)
	}
	pid := st.ProcessID
	dir := filepath.Dir(logFile)
	before, err := sys.StackDumps(dir, pid)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "", fmt.Errorf("dump service %q: %w: the stack dump goes to %s, which only SYSTEM and Administrators may read; %s",
			name, err, dir, elevate("service dump"))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("dump service %q: %w", name, err)
	}
	event := stackdump.EventName(pid)
	if err := sys.Signal(event); err != nil {
		switch {
		case errors.Is(err, stackdump.ErrAccessDenied):
			return "", fmt.Errorf("dump service %q: %w: only SYSTEM and Administrators may ask process %d for its stacks; %s",
				name, err, pid, elevate("service dump"))
		case errors.Is(err, stackdump.ErrNoEvent):
			return "", fmt.Errorf("dump service %q: process %d does not take stack dump requests (%w): it is still starting, "+
				"or the service runs an older edgecore.exe (%s); wait a few seconds and try again, or check the log file %s",
				name, pid, err, st.CommandLine, logFile)
		}
		return "", fmt.Errorf("dump service %q: %w", name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path, err := crashlog.WaitForStackDump(wctx, dir, pid, before, dumpPoll)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("dump service %q: %w", name, ctx.Err())
		}
		return "", fmt.Errorf("dump service %q: asked process %d for its goroutine stacks, but no stack dump of it appeared in %s within %v; "+
			"the log file %s says why (search it for \"stack dump\")", name, pid, dir, timeout, logFile)
	}
	return path, nil
}
