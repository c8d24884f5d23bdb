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
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/durable"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// HostEnv is this host: its files, d's layout, service manager and clock,
// the ACLs, and this process.
func HostEnv(d *deps.Dependencies) Env {
	return Env{
		GOOS:     d.Host.GOOS,
		Paths:    NewPaths(d.Layout),
		FS:       OSFS{},
		Services: d.Services,
		Service:  service.DefaultName,
		Clock:    d.Clock,
		Restrict: func(dir string) error { return acl.ApplyTree(dir, acl.DirectorySDDL) },
		Spawn:    spawnDetached,
		Alive:    processAlive,
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

// OSFS is the host's file system. Every rename it makes, its own and the
// one that puts a written file in place, is on disk when it returns
// (durable.Rename), and a written file is flushed before that rename: the
// power-cut test (crash_test.go) assumes both.
type OSFS struct {
	// disk makes the calls whose order the power-cut test depends on;
	// nil is the host's (hostDisk).
	disk disk
}

func (o OSFS) d() disk {
	if o.disk == nil {
		return hostDisk{}
	}
	return o.disk
}

func (OSFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
func (o OSFS) Rename(from, to string) error       { return o.d().Rename(from, to) }
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

func (o OSFS) WriteFile(path string, data []byte) error {
	return writeDurable(o.d(), path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func (o OSFS) CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeDurable(o.d(), dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// disk is what OSFS asks of the operating system to replace a file: a
// temporary file beside it, its flush, the rename that puts it in place
// and the removal of what is left after a failure. It is an interface so
// that a test records the calls in order.
type disk interface {
	CreateTemp(dir, pattern string) (tempFile, error)
	// Rename replaces to with from and returns once that is on disk.
	Rename(from, to string) error
	Remove(path string) error
}

// tempFile is the part of *os.File that writeDurable uses.
type tempFile interface {
	io.Writer
	Name() string
	// Sync flushes what was written to the disk.
	Sync() error
	Close() error
}

// hostDisk is the host's: os and durable.
type hostDisk struct{}

func (hostDisk) CreateTemp(dir, pattern string) (tempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}
func (hostDisk) Rename(from, to string) error { return durable.Rename(from, to) }
func (hostDisk) Remove(path string) error     { return os.Remove(path) }

// writeDurable writes path through a file beside it that is flushed to
// disk before it is renamed into place, and the rename is on disk before
// it returns. config's writer for configuration files does not flush:
// there a power cut costs an edit, here it could cost the record of which
// binary is where. The rename is tried a few times, because on Windows a
// reader that has the file open at that instant (the node polls the
// journal) makes it fail.
func writeDurable(d disk, path string, write func(io.Writer) error) error {
	tmp, err := d.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
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
		d.Remove(name)
		return err
	}
	for i := 0; ; i++ {
		err = d.Rename(name, path)
		if err == nil || i == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		d.Remove(name)
	}
	return err
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
