package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Linux keeps 15 characters of a program's name in /proc/<pid>/stat; the
// list must give the whole file name, as Toolhelp does on Windows.
func TestListGivesLongNamesWhole(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program to copy:", err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	const name = "kube-proxy-with-a-long-name"
	prog := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "30")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot run a program from the temporary directory:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// The name is the exec'd file's only once exec has happened.
	deadline := time.Now().Add(5 * time.Second)
	for {
		list, err := List()
		if err != nil {
			t.Fatal(err)
		}
		p, ok := Find(list, cmd.Process.Pid)
		if ok && p.Name == name && p.ParentPID == os.Getpid() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child PID %d listed as %+v (found %v), want name %q and parent %d", cmd.Process.Pid, p, ok, name, os.Getpid())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
