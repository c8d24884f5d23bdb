package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The list must show this test process as Task Manager or ps would: its
// PID, its parent's and its program name.
func TestListShowsThisProcess(t *testing.T) {
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, ok := Find(list, os.Getpid())
	if !ok {
		t.Fatalf("PID %d (this test) is not among the %d listed processes", os.Getpid(), len(list))
	}
	want := filepath.Base(exe)
	if self.Name != want && !(runtime.GOOS == "windows" && strings.EqualFold(self.Name, want)) {
		t.Errorf("this test is listed as %q, want %q", self.Name, want)
	}
	if self.ParentPID != os.Getppid() {
		t.Errorf("parent PID %d, want %d", self.ParentPID, os.Getppid())
	}
	// Under Wine the parent is the Unix process that started wine, which
	// Toolhelp does not list; elsewhere it is `go test` or a shell.
	_, parentListed := Find(list, os.Getppid())
	parent, ok := Parent(list, os.Getpid())
	if ok != parentListed || ok && (parent.PID != os.Getppid() || parent.Name == "") {
		t.Errorf("parent of this test: %+v %v, want PID %d with a name (listed: %v)", parent, ok, os.Getppid(), parentListed)
	}
	if runtime.GOOS != "windows" && !ok {
		t.Errorf("the parent of this test, PID %d, is not listed", os.Getppid())
	}
}

// Linux keeps 15 characters of a program's name in /proc/<pid>/stat; the
// list must give the whole file name, as Toolhelp does on Windows.
func TestListGivesLongNamesWhole(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Toolhelp names are not truncated")
	}
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

func TestParent(t *testing.T) {
	list := []Process{
		{PID: 0, ParentPID: 0, Name: "[System Process]"},
		{PID: 4, ParentPID: 0, Name: "System"},
		{PID: 640, ParentPID: 4, Name: "services.exe"},
		{PID: 4242, ParentPID: 640, Name: "edgecore.exe"},
		{PID: 5000, ParentPID: 3999, Name: "orphan.exe"}, // its parent exited
	}
	for _, tc := range []struct {
		pid  int
		want string
		ok   bool
	}{
		{4242, "services.exe", true},
		{4, "[System Process]", true},
		{0, "", false},    // its own parent
		{5000, "", false}, // parent gone
		{7, "", false},    // not listed
	} {
		p, ok := Parent(list, tc.pid)
		if ok != tc.ok || p.Name != tc.want {
			t.Errorf("Parent(%d) = %+v, %v; want %q, %v", tc.pid, p, ok, tc.want, tc.ok)
		}
	}
}

// Identify names this test's own program and account, as the system
// gives them.
func TestIdentifyThisProcess(t *testing.T) {
	id, err := Identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if id.Image != exe && !(runtime.GOOS == "windows" && strings.EqualFold(id.Image, exe)) {
		t.Errorf("image %q (%s), want %q", id.Image, id.ImageErr, exe)
	}
	if id.Account == "" {
		t.Errorf("no account: %s", id.AccountErr)
	}
	if runtime.GOOS != "windows" && id.Account != strconv.Itoa(os.Getuid()) {
		t.Errorf("account %q, want user %d", id.Account, os.Getuid())
	}
	if runtime.GOOS == "windows" && !strings.HasPrefix(id.Account, "S-1-") {
		t.Errorf("account %q is not a SID", id.Account)
	}
	if !strings.Contains(id.Who(), id.Account) {
		t.Errorf("Who() = %q does not name %q", id.Who(), id.Account)
	}
}

func TestIdentifyAProcessThatIsGone(t *testing.T) {
	// Process ids are multiples of 4 on Windows and far below this on
	// Linux: no process has it.
	if _, err := Identify(0x7ffffff0); err == nil {
		t.Error("Identify of a process that does not exist gave no error")
	}
}

func TestSameObjectName(t *testing.T) {
	for _, tc := range []struct {
		nt, name string
		want     bool
	}{
		{`\BaseNamedObjects\stackdump-4242`, `Global\stackdump-4242`, true},
		{`\BaseNamedObjects\STACKDUMP-4242`, `global\stackdump-4242`, true},
		{`\Sessions\1\BaseNamedObjects\stackdump-4242`, `Global\stackdump-4242`, false},
		{`\BaseNamedObjects\stackdump-42420`, `Global\stackdump-4242`, false},
		{`\BaseNamedObjects\x-stackdump-4242`, `Global\stackdump-4242`, false},
		{`\Sessions\1\BaseNamedObjects\test-1`, `Local\test-1`, true},
		{`\Sessions\1\BaseNamedObjects\test-1`, `test-1`, true},
		{`\Sessions\1\BaseNamedObjects\xtest-1`, `Local\test-1`, false},
		{``, `Local\test-1`, false},
	} {
		if got := SameObjectName(tc.nt, tc.name); got != tc.want {
			t.Errorf("SameObjectName(%q, %q) = %v, want %v", tc.nt, tc.name, got, tc.want)
		}
	}
}
