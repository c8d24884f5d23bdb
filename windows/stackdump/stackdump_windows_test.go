//go:build windows

package stackdump

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// testSDDL lets the test process (whoever runs it) open the event; the
// descriptor edgecore uses, acl.EventSDDL, is tested in windows/acl.
const testSDDL = "D:P(A;;GA;;;WD)"

func testName(t *testing.T) string {
	// Local\ rather than Global\: creating a global object needs
	// privileges a test prompt may lack; the calls are the same.
	return fmt.Sprintf(`Local\edgecore-stackdump-test-%d-%s`, os.Getpid(), t.Name())
}

func TestSignalWakesWait(t *testing.T) {
	name := testName(t)
	ev, err := Create(name, testSDDL)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	woke := make(chan error, 1)
	go func() { woke <- ev.Wait() }()
	select {
	case err := <-woke:
		t.Fatalf("Wait returned %v before any signal", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := Signal(name); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatalf("Wait after Signal = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return within 5s of Signal")
	}
	// Auto-reset: one signal, one dump.
	go func() { woke <- ev.Wait() }()
	select {
	case err := <-woke:
		t.Fatalf("a second Wait returned %v without a second signal", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Wait after Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the Wait")
	}
}

func TestSignalWithoutEvent(t *testing.T) {
	err := Signal(testName(t))
	if !errors.Is(err, ErrNoEvent) {
		t.Errorf("Signal of a missing event = %v, want ErrNoEvent", err)
	}
}

func TestCreateRefusesAnExistingEvent(t *testing.T) {
	name := testName(t)
	name16, _ := windows.UTF16PtrFromString(name)
	squat, err := windows.CreateEvent(nil, 0, 0, name16)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(squat)
	if ev, err := Create(name, testSDDL); !errors.Is(err, ErrExists) {
		if ev != nil {
			ev.Close()
		}
		t.Errorf("Create of an event someone else made = %v, want ErrExists", err)
	}
}

// squatEnv makes the test binary another process that creates the event
// its value names and holds it until its standard input closes.
const squatEnv = "EDGECORE_STACKDUMP_TEST_SQUAT"

func TestMain(m *testing.M) {
	if name := os.Getenv(squatEnv); name != "" {
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

// Another process created the event name first, as any account may in the
// Global namespace: Create refuses it and names that process.
func TestCreateNamesTheProcessThatMadeTheEventFirst(t *testing.T) {
	name := testName(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), squatEnv+"="+name)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "holding" {
		t.Fatalf("the other process did not create the event: %q %v", line, err)
	}
	ev, err := Create(name, testSDDL)
	if err == nil {
		ev.Close()
		t.Fatalf("Create of an event process %d made succeeded", cmd.Process.Pid)
	}
	want := fmt.Sprintf("process %d (", cmd.Process.Pid)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), want) {
		t.Errorf("Create = %v, want ErrExists naming %q", err, want)
	}
}

func TestCreateAppliesTheDescriptor(t *testing.T) {
	name := testName(t)
	// Nobody may open it: only the creator's own handle works.
	ev, err := Create(name, "D:P")
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if err := Signal(name); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("Signal of an event nobody may open = %v, want ErrAccessDenied", err)
	}
}

// TestCreateKeepsEdgecoresDescriptor reads back, through the service
// manager's own call for kernel objects, the security descriptor of an
// event created with the one edgecore uses: only SYSTEM and Administrators
// may signal or wait on it. Wine keeps kernel objects' descriptors, so this
// runs there too.
func TestCreateKeepsEdgecoresDescriptor(t *testing.T) {
	ev, err := Create(testName(t), acl.EventSDDL)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	sd, err := windows.GetSecurityInfo(ev.signal, windows.SE_KERNEL_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	got, err := acl.ParseSDDL(sd.String())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Protected {
		t.Errorf("the event's DACL %s is not protected", sd)
	}
	var trustees []string
	for _, a := range got.ACEs {
		if !a.Allows() {
			t.Errorf("the event's DACL %s has an ACE that does not allow: %+v", sd, a)
		}
		trustees = append(trustees, acl.TrusteeName(a.Trustee))
	}
	if len(got.ACEs) != 2 || !acl.SameSID(got.ACEs[0].Trustee, "SY") || !acl.SameSID(got.ACEs[1].Trustee, "BA") {
		t.Errorf("the event admits %v (%s), want SYSTEM and Administrators only", trustees, sd)
	}
}
