package jobpolicy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// The host's own judge of a Linux host reads the file's real owner: built
// for Linux only, where files have one (make wine-test runs this package's
// Windows build, whose judge TestHostJudgeOnWindowsJudgesOwnerAndDACL
// tests).
func TestHostJudgeReadsTheFilesOwner(t *testing.T) {
	f := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := HostJudge("linux", protect.Host{})(f)
	if (os.Getuid() == 0) != (err == nil) {
		t.Errorf("uid %d: %v", os.Getuid(), err)
	}
}
