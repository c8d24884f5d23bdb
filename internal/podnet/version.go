package podnet

import (
	"context"
	"os/exec"
	"time"

	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// InstalledContainerd asks `containerd --version` of the binary in
// containerdDir\bin (where containerd's release archive puts it), or of the
// one on PATH.
func InstalledContainerd(goos, containerdDir string) ContainerdVersion {
	return func() (containerd.Runtime, error) {
		bin := ospath.Join(goos, containerdDir, "bin", "containerd.exe")
		if goos != "windows" {
			bin = "containerd"
		}
		path, err := exec.LookPath(bin)
		if err != nil {
			if path, err = exec.LookPath("containerd"); err != nil {
				return containerd.Runtime{}, err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "--version").Output()
		if err != nil {
			return containerd.Runtime{}, err
		}
		return containerd.ParseVersionOutput(string(out))
	}
}
