package upgrade

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/clock"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// HostEnv is this host: its files, the service manager, the ACLs, and
// this process.
func HostEnv(host config.Host) Env {
	return Env{
		GOOS:     host.GOOS,
		Paths:    NewPaths(config.NewLayout(host)),
		FS:       OSFS{},
		Services: hostServices{},
		Clock:    clock.Real{},
		Restrict: func(dir string) error { return acl.ApplyTree(dir, acl.DirectorySDDL) },
		Spawn:    spawnDetached,
		Alive:    processAlive,
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
		VersionOf: versionOf,
		Arch:      runtime.GOARCH,
	}
}

// OSFS is the host's file system.
type OSFS struct{}

func (OSFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
func (OSFS) Rename(from, to string) error         { return os.Rename(from, to) }
func (OSFS) Remove(path string) error             { return os.Remove(path) }
func (OSFS) RemoveAll(path string) error          { return os.RemoveAll(path) }
func (OSFS) Stat(path string) (fs.FileInfo, error) {
	return os.Stat(path)
}
func (OSFS) MkdirAll(path string) error         { return os.MkdirAll(path, 0o750) }
func (OSFS) SHA256(path string) (string, error) { return release.FileSHA256(path) }

func (OSFS) ReadDir(path string) ([]string, error) {
	entries, err := os.ReadDir(path)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, err
}

func (OSFS) WriteFile(path string, data []byte) error {
	return writeDurable(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func (OSFS) CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeDurable(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// writeDurable writes path through a file beside it that is flushed to
// disk before it is renamed into place. config's writer for configuration
// files does not flush: there a power cut costs an edit, here it could
// cost the record of which binary is where. The rename is tried a few
// times, because on Windows a reader that has the file open at that
// instant (the node polls the journal) makes it fail.
func writeDurable(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	for i := 0; ; i++ {
		err = os.Rename(name, path)
		if err == nil || i == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// hostServices is the service manager with the service package's own time
// limits for starting and stopping.
type hostServices struct{}

func (hostServices) Query(name string) (service.Status, error) { return service.Query(name) }
func (hostServices) Start(name string) error {
	return service.Start(name, service.StartTimeout)
}
func (hostServices) Stop(name string) error {
	return service.Stop(name, service.StopWaitTimeout)
}
func (hostServices) SetCommandLine(name, line string) error {
	return service.SetCommandLine(name, line)
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
