package upgrade

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// HostEnv is this host: its files, d's layout, service manager and clock,
// the ACLs, and this process.
func HostEnv(d *deps.Dependencies) Env {
	return Env{
		GOOS:     d.Host.GOOS,
		Paths:    NewPaths(d.Layout),
		FS:       d.FS,
		Services: d.Services,
		Service:  service.DefaultName,
		Clock:    d.Clock,
		// Judged first, as every restriction of the node is: what is
		// below the backups or the staged packages is re-owned only once
		// it is known to be SYSTEM's or Administrators'. Folders of the
		// node's own, in the kubeedge directory: nothing to record.
		Restrict: func(dir string) error {
			acls := d.ACLs
			acls.Record = ""
			_, err := protect.Enforce([]protect.Target{{What: "the upgrade's backups and staged packages", Path: dir, Restrict: true, Own: true}}, acls, protect.Adopting)
			return err
		},
		TrustSettings: func(path string) error {
			return protect.CheckFile(d.Host.GOOS, d.ACLs, "the upgrade settings, which name where the binaries that run as SYSTEM come from", path)
		},
		Spawn: spawnDetached,
		Alive: processAlive,
		ConfigDataSource: func(configFile string) (string, error) {
			raw, err := d.FS.ReadFile(configFile)
			if err != nil {
				return "", err
			}
			// Parsed, not validated: the database is where the file
			// says, whether or not this build would run with the rest.
			c, err := config.Parse(raw, d.Host)
			if err != nil {
				return "", err
			}
			return c.DataBase.DataSource, nil
		},
		Runtime: RuntimeEnv{Layout: d.Layout, CRI: d.Probes.CRI},
		PID:     os.Getpid(),
		Version: version.Get().Version,
	}
}

// HostFacts are the real ways to learn what the service runs.
func HostFacts(host config.Host) Facts {
	return Facts{
		DataSource: func(configFile string) (string, error) {
			c, _, err := config.Load(configFile, host)
			if err != nil {
				return "", err
			}
			return c.DataBase.DataSource, nil
		},
		CRIEndpoint: func(configFile string) (string, error) {
			c, _, err := config.Load(configFile, host)
			if err != nil {
				return "", err
			}
			return c.Modules.Edged.TailoredKubeletConfig.ContainerRuntimeEndpoint, nil
		},
		VersionOf: versionOf,
		Arch:      runtime.GOARCH,
		Pods:      nodedb.Pods,
	}
}

// processAlive reports whether an edgecore process with this ID runs.
// Process IDs are reused (quickly under Wine), so a process of another
// name under a dead driver's ID does not count.
func processAlive(pid int) bool {
	list, err := proc.List()
	if err != nil {
		// Without a process list only the heartbeat can tell.
		return true
	}
	p, ok := proc.Find(list, pid)
	return ok && (p.Name == "" || strings.EqualFold(p.Name, config.ExecutableName(runtime.GOOS)))
}

// spawnDetached starts a process that outlives this one: when the service
// stops, the service manager ends the service's process but not the
// processes it started, so an upgrade started by the service can stop it
// and start it again.
func spawnDetached(exe string, args []string, logFile string) (int, error) {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o750); err != nil {
		return 0, err
	}
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", exe, err)
	}
	pid := cmd.Process.Pid
	cmd.Process.Release()
	return pid, nil
}

// versionOf reads the version of the edgecore binary the service runs
// from the file (version.OfFile), never by running it: the binary the
// service runs may be another build than this command, and what a file
// does when run is up to whoever could change it.
func versionOf(exe string) (string, error) {
	s, err := version.OfFile(exe)
	if err != nil {
		return "", err
	}
	if s.Program != version.ProgramThis {
		return "", fmt.Errorf("%s is %s, not a build of %s", exe, s, version.ProgramThis)
	}
	return s.Version, nil
}
