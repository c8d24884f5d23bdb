package imagetest

import (
	"bytes"
	"os/exec"
	"testing"
	"time"
)

// StartContainerd runs a real containerd (exe) with the configuration
// cfg and the further arguments args until the test ends, and waits up to a minute until ready (the
// socket or pipe answers); its log is shown when the test fails. It
// returns the daemon's process ID.
func StartContainerd(t *testing.T, exe, cfg string, ready func() error, args ...string) (pid int) {
	t.Helper()
	var logs bytes.Buffer
	cmd := exec.Command(exe, append([]string{"--config", cfg}, args...)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("containerd's log:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(time.Minute); ; {
		err := ready()
		if err == nil {
			return cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer within a minute: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
