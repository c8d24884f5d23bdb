package images

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

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

// startContainerd is imagetest.StartContainerd.
func startContainerd(t *testing.T, exe, cfg string, ready func() error, args ...string) (pid int) {
	t.Helper()
	return imagetest.StartContainerd(t, exe, cfg, ready, args...)
}

// tempDir is a directory for the test that can also be removed under
// Wine (make wine-test runs this package there too).
func tempDir(t *testing.T) string { return testdir.New(t, "images-test-") }
