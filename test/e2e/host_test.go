//go:build e2e

package e2e

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// winHost is a Windows host of its own: a fresh copy of a Wine prefix that
// no test has run in, with edgecore.exe run there the way an operator runs
// it, its service installed in that prefix's service manager. Everything
// the host writes under C: lands in the copy, so the test can look at the
// files an operator would see.
type winHost struct {
	prefix string
	wine   string
	exe    string
	env    []string
	logDir string // where the command outputs go, on this machine
	runs   int
}

// newWinHost copies the clean prefix JOURNEY_WINEPREFIX into the test's
// directory. Wine's server for the copy is kept running between commands
// and ended, with the service, when the test ends.
func newWinHost(t *testing.T) *winHost {
	t.Helper()
	clean := mustEnv(t, "JOURNEY_WINEPREFIX")
	if _, err := os.Stat(filepath.Join(clean, "system.reg")); err != nil {
		fatalf(t, "JOURNEY_WINEPREFIX %s is not a prepared Wine prefix (run `make e2e`): %v", clean, err)
	}
	dir := t.TempDir()
	h := &winHost{
		prefix: filepath.Join(dir, "prefix"),
		wine:   mustEnv(t, "WINE"),
		exe:    mustEnv(t, "EDGECORE_EXE"),
		logDir: dir,
	}
	if out, err := exec.Command("cp", "-a", clean, h.prefix).CombinedOutput(); err != nil {
		fatalf(t, "copy the clean Wine prefix: %v\n%s", err, out)
	}
	h.env = []string{"WINEPREFIX=" + h.prefix, "WINEDEBUG=-all"}
	h.boot(t)
	t.Cleanup(h.shutdown)
	return h
}

// boot starts the host's Wine server, persistent so that the service
// manager and the service outlive each command.
func (h *winHost) boot(t *testing.T) {
	t.Helper()
	server := exec.Command(h.wineserver(), "-p")
	server.Env = append(os.Environ(), h.env...)
	if err := server.Run(); err != nil {
		fatalf(t, "start wineserver for %s: %v", h.prefix, err)
	}
}

// shutdown ends every process of the host, as a power-off does.
func (h *winHost) shutdown() {
	kill := exec.Command(h.wineserver(), "-k")
	kill.Env = append(os.Environ(), h.env...)
	kill.Run()
	wait := exec.Command(h.wineserver(), "-w")
	wait.Env = kill.Env
	wait.Run()
}

// restart is a reboot of the host: its processes end and its Wine server
// starts again; the service manager starts with the next program.
func (h *winHost) restart(t *testing.T) {
	t.Helper()
	h.shutdown()
	h.boot(t)
}

// install copies edgecore.exe to dir on the host's C: drive, as an
// operator copies it onto a server, and runs it from there from now on:
// an upgrade replaces the installed binary, never the build's.
func (h *winHost) install(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(h.exe)
	if err != nil {
		fatal(t, err)
	}
	exe := dir + `\edgecore.exe`
	if err := os.MkdirAll(h.drive(dir), 0o755); err != nil {
		fatal(t, err)
	}
	if err := os.WriteFile(h.drive(exe), data, 0o755); err != nil {
		fatal(t, err)
	}
	h.exe = exe
}

// installRelease unpacks the release zip at pkg (its one top folder) into
// dir, as the quick start's Expand-Archive and Copy-Item do, the bundled
// runtime included, and runs edgecore.exe from there.
func (h *winHost) installRelease(t *testing.T, pkg, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(pkg)
	if err != nil {
		fatal(t, err)
	}
	defer zr.Close()
	root := h.drive(dir)
	for _, f := range zr.File {
		_, rel, ok := strings.Cut(f.Name, "/")
		if !ok || rel == "" || strings.HasSuffix(f.Name, "/") {
			continue
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if !strings.HasPrefix(dst, root+string(filepath.Separator)) {
			fatalf(t, "%s: %s leaves the release folder", pkg, f.Name)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fatal(t, err)
		}
		in, err := f.Open()
		if err != nil {
			fatal(t, err)
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
		if err == nil {
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		in.Close()
		if err != nil {
			fatal(t, err)
		}
	}
	h.exe = dir + `\edgecore.exe`
	if !fileExists(h.drive(h.exe)) {
		fatalf(t, "%s has no edgecore.exe in its top folder", pkg)
	}
}

func (h *winHost) wineserver() string {
	if p := filepath.Join(filepath.Dir(h.wine), "wineserver"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("wineserver"); err == nil {
		return p
	}
	return "/usr/lib/wine/wineserver"
}

// drive names a file of the host's C: drive on this machine, e.g.
// drive(`C:\etc\kubeedge`).
func (h *winHost) drive(windowsPath string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(windowsPath, "C:"), "c:")
	return filepath.Join(h.prefix, "drive_c", filepath.FromSlash(strings.ReplaceAll(p, `\`, "/")))
}

type cmdResult struct {
	out      string
	code     int
	duration time.Duration
}

// edgecore runs `edgecore.exe args...` on the host and waits for it. The
// output goes to a file, not a pipe: Wine's own processes started by the
// first command (the service manager among them) inherit its descriptors
// and would hold a pipe open for as long as they live.
func (h *winHost) edgecore(t *testing.T, timeout time.Duration, args ...string) cmdResult {
	t.Helper()
	return h.run(t, timeout, h.exe, args...)
}

func (h *winHost) run(t *testing.T, timeout time.Duration, program string, args ...string) cmdResult {
	t.Helper()
	h.runs++
	logPath := filepath.Join(h.logDir, fmt.Sprintf("cmd-%02d.log", h.runs))
	f, err := os.Create(logPath)
	if err != nil {
		fatal(t, err)
	}
	defer f.Close()
	cmd := exec.Command(h.wine, append([]string{program}, args...)...)
	cmd.Env = append(os.Environ(), h.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		fatalf(t, "start %s %v: %v", program, args, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(timeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		data, _ := os.ReadFile(logPath)
		fatalf(t, "%s %v did not finish within %v; output:\n%s", filepath.Base(program), args, timeout, data)
	}
	r := cmdResult{duration: time.Since(begin)}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		fatalf(t, "%s %v: %v", program, args, err)
	}
	data, _ := os.ReadFile(logPath)
	r.out = strings.ReplaceAll(string(data), "\r\n", "\n")
	return r
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
