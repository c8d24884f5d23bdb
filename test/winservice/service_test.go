//go:build windows

// Package winservice drives `edgecore.exe service ...` the way an operator
// does and checks every state change through the service manager's own API.
// It is a Windows test binary; `make wine-test` runs it under Wine with
// EDGECORE_EXE set. It installs a real service, so it never runs by itself.
package winservice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/kubeedge-windows/edgecore/internal/hostfs"
)

const name = "edgecore"

func edgecore(t *testing.T, args ...string) (string, int) {
	t.Helper()
	exe := os.Getenv("EDGECORE_EXE")
	if exe == "" {
		t.Fatal("EDGECORE_EXE is not set: run this test with `make wine-test`")
	}
	out, err := exec.Command(exe, args...).CombinedOutput()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("edgecore.exe %v: %v", args, err)
	}
	return string(out), code
}

// state asks the service manager, not edgecore, what the service is doing.
func state(t *testing.T) (svc.State, bool) {
	t.Helper()
	m, err := mgr.Connect()
	if err != nil {
		t.Fatalf("connect to the service manager: %v", err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return 0, false
	}
	defer s.Close()
	st, err := s.Query()
	if err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	return st.State, true
}

// eventSource is the registry key of the Application log's edgecore source.
const eventSource = `SYSTEM\CurrentControlSet\Services\EventLog\Application\edgecore`

// registeredSource is the message file the edgecore event source is
// registered with, and whether it is registered.
func registeredSource(t *testing.T) (string, bool) {
	t.Helper()
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, eventSource, registry.QUERY_VALUE)
	if err != nil {
		return "", false
	}
	defer k.Close()
	file, _, err := k.GetStringValue("EventMessageFile")
	if err != nil {
		t.Fatalf("the edgecore event source's EventMessageFile: %v", err)
	}
	return file, true
}

// A configuration with nothing that needs a container runtime or a cloud,
// so that the service stays up until it is told to stop.
func idleConfig(t *testing.T) string {
	t.Helper()
	// In %ProgramData%, not %TEMP%: the service refuses to start on a
	// configuration in a folder another account owns, and on Windows the
	// account running the test owns its %TEMP%.
	dir, err := os.MkdirTemp(os.Getenv("ProgramData"), "edgecore service test ")
	if err != nil {
		t.Fatal(err)
	}
	// os.RemoveAll fails under Wine; join's removal does not.
	t.Cleanup(func() { hostfs.RemoveTree(hostfs.OS{}, "windows", dir) })
	cfg := filepath.Join(dir, "edge core.yaml")
	text := "apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\n" +
		"database:\n  dataSource: " + filepath.Join(dir, "edgecore.db") + "\n" +
		"modules:\n  edged:\n    enable: false\n  edgeHub:\n    enable: false\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestServiceCommands(t *testing.T) {
	if _, installed := state(t); installed {
		t.Fatalf("a service %q is already installed; remove it first", name)
	}
	cfg := idleConfig(t)
	t.Cleanup(func() { edgecore(t, "service", "uninstall") })

	out, code := edgecore(t, "service", "status")
	if code != 0 || !strings.Contains(out, "not installed") {
		t.Fatalf("status before install: exit %d\n%s", code, out)
	}

	out, code = edgecore(t, "service", "install", "--config", cfg)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, `"`+cfg+`"`) {
		t.Errorf("install does not show the quoted config path:\n%s", out)
	}
	if st, ok := state(t); !ok || st != svc.Stopped {
		t.Fatalf("after install the service manager reports installed=%v state=%v", ok, st)
	}
	if file, ok := registeredSource(t); !ok || !strings.Contains(strings.ToLower(file), "eventcreate.exe") {
		t.Errorf("after install the Application log's edgecore source is registered=%v with message file %q, want EventCreate.exe", ok, file)
	}
	if out, code = edgecore(t, "service", "install", "--config", cfg); code == 0 || !strings.Contains(out, "uninstall") {
		t.Errorf("a second install: exit %d, want an error pointing to uninstall\n%s", code, out)
	}

	if out, code = edgecore(t, "service", "start"); code != 0 {
		t.Fatalf("start: exit %d\n%s", code, out)
	}
	if st, _ := state(t); st != svc.Running {
		t.Fatalf("after start the service manager reports %v", st)
	}
	if out, _ = edgecore(t, "service", "status"); !strings.Contains(out, "running") {
		t.Errorf("status while running:\n%s", out)
	}

	if out, code = edgecore(t, "service", "stop"); code != 0 {
		t.Fatalf("stop: exit %d\n%s", code, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st, _ := state(t); st != svc.Stopped; st, _ = state(t) {
		if time.Now().After(deadline) {
			t.Fatalf("the service is still %v 30 s after stop", st)
		}
		time.Sleep(200 * time.Millisecond)
	}

	if out, code = edgecore(t, "service", "uninstall"); code != 0 {
		t.Fatalf("uninstall: exit %d\n%s", code, out)
	}
	if _, installed := state(t); installed {
		t.Fatal("the service manager still knows the service after uninstall")
	}
	if _, ok := registeredSource(t); ok {
		t.Error("the Application log's edgecore source is still registered after uninstall")
	}
	if out, _ = edgecore(t, "service", "status"); !strings.Contains(out, "not installed") {
		t.Errorf("status after uninstall:\n%s", out)
	}
}
