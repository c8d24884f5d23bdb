package upgrade

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/acl"
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
		Restrict: func(dir string) error { return acl.ApplyTree(dir, acl.DirectorySDDL) },
		Spawn:    spawnDetached,
		Alive:    ProcessAlive,
		Runtime:  RuntimeEnv{Layout: d.Layout, CRI: d.Probes.CRI},
		PID:      os.Getpid(),
		Version:  version.Get().Version,
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

// ProcessAlive reports whether an edgecore process with this ID runs (the
// driver of a journal, a join that left its record).
// Process IDs are reused (quickly under Wine), so a process of another
// name under a dead driver's ID does not count.
func ProcessAlive(pid int) bool {
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

// versionOf asks an edgecore binary for its version, as `edgecore.exe
// version` prints it in its first line ("edgecore for Windows v0.1.0").
// The binary the service runs may be another build than this command.
func versionOf(exe string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "version").Output()
	if err != nil {
		return "", fmt.Errorf("run %s version: %w", exe, err)
	}
	return parseVersionOutput(out)
}

func parseVersionOutput(out []byte) (string, error) {
	line, _ := bufio.NewReader(bytes.NewReader(out)).ReadString('\n')
	fields := strings.Fields(line)
	if len(fields) < 2 || !strings.HasPrefix(line, "edgecore") {
		return "", fmt.Errorf("unexpected version output %q", strings.TrimSpace(line))
	}
	return fields[len(fields)-1], nil
}
