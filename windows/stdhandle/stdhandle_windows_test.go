//go:build windows

package stdhandle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// childEnv makes the test binary the process under test: it redirects its
// standard error to the file the variable names and then panics.
const childEnv = "STDHANDLE_TEST_PANIC_FILE"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Println("create:", err)
			os.Exit(3)
		}
		if err := RedirectStderr(f); err != nil {
			fmt.Println("redirect:", err)
			os.Exit(3)
		}
		fmt.Fprintln(os.Stderr, "written through os.Stderr")
		panic("the child panics on purpose")
	}
	os.Exit(m.Run())
}

// TestPanicOutputLandsInTheFile is what panic.log relies on: the runtime's
// own panic output, which does not go through os.Stderr, follows the
// redirected handle.
func TestPanicOutputLandsInTheFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "stdhandle-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "panic.log")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child ended with %v, want the exit code 2 of a panic; stderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"written through os.Stderr", "panic: the child panics on purpose", "goroutine 1 [running]"} {
		if !strings.Contains(got, want) {
			t.Errorf("the file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(stderr.String(), "panics on purpose") {
		t.Errorf("the panic still went to the original standard error:\n%s", stderr.String())
	}
}
