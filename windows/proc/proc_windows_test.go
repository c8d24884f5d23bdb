//go:build windows

package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// holdEnv makes the test binary another process that creates the event
// its value names and holds it until its standard input closes.
const holdEnv = "EDGECORE_PROC_TEST_HOLD"

func TestMain(m *testing.M) {
	if name := os.Getenv(holdEnv); name != "" {
		name16, _ := windows.UTF16PtrFromString(name)
		if _, err := windows.CreateEvent(nil, 0, 0, name16); err != nil {
			fmt.Println("create:", err)
			os.Exit(1)
		}
		fmt.Println("holding")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The process that made an event is found from the system's handle table,
// and so is its program; this process, which holds the event too, is
// left out.
func TestEventHoldersFindsTheOtherProcess(t *testing.T) {
	name := fmt.Sprintf(`Local\edgecore-proc-test-%d`, os.Getpid())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), holdEnv+"="+name)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "holding" {
		t.Fatalf("the other process did not create the event: %q %v", line, err)
	}
	name16, _ := windows.UTF16PtrFromString(name)
	mine, err := windows.CreateEvent(nil, 0, 0, name16)
	if err != windows.ERROR_ALREADY_EXISTS {
		t.Fatalf("CreateEvent of the other process's event: %v, want ERROR_ALREADY_EXISTS", err)
	}
	defer windows.CloseHandle(mine)
	pids, err := EventHolders(name)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pids) != fmt.Sprint([]int{cmd.Process.Pid}) {
		t.Errorf("EventHolders(%s) = %v, want [%d]", name, pids, cmd.Process.Pid)
	}
	id, err := Identify(cmd.Process.Pid)
	if err != nil || !strings.EqualFold(id.Image, exe) {
		t.Errorf("Identify(%d) = %+v, %v; want image %s", cmd.Process.Pid, id, err, exe)
	}
	if none, err := EventHolders(name + "-none"); err != nil || len(none) != 0 {
		t.Errorf("EventHolders of an event nobody made = %v, %v", none, err)
	}
}
