package images

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/images/imagetest"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// here is the platform of this test binary: the one its containerd
// imports.
var here = imagetest.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}

type blob = imagetest.Blob

func writeTar(t *testing.T, files []blob) []byte { return imagetest.Tar(t, files) }

func digestOf(b []byte) string { return imagetest.Digest(b) }

// ociArchive is an OCI image layout tarball of one image for this test's
// platform (imagetest.OCIArchive).
func ociArchive(t *testing.T, name, marker string) []byte {
	return imagetest.OCIArchive(t, name, marker, here)
}

// dockerArchive is what docker save writes for one image tagged repoTag.
func dockerArchive(t *testing.T, repoTag string) []byte {
	return imagetest.DockerArchive(t, repoTag, here)
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startContainerd runs the containerd at exe with the configuration file
// cfg until the test ends, and waits up to a minute for ready to succeed;
// its log is shown when the test fails.
func startContainerd(t *testing.T, exe, cfg string, ready func() error) (pid int) {
	t.Helper()
	var logs bytes.Buffer
	cmd := exec.Command(exe, "--config", cfg)
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

// tempDir is a directory for the test that can also be removed under
// Wine (make wine-test runs this package there too).
func tempDir(t *testing.T) string { return testdir.New(t, "images-test-") }
