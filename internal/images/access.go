package images

import (
	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// Access is the check Importer.Trusted makes on host goos: on Windows an
// archive is read only when SYSTEM, Administrators or TrustedInstaller own
// it, its folder and every folder above them, and no other account may
// change the archive or the folder, or rename a folder above: whoever
// could would choose what the node, as SYSTEM, puts in containerd under
// a name such as registry.k8s.io/pause. A refusal names the path and the
// icacls command that fixes it, as join's does. Elsewhere file modes
// protect the host, and there is nothing to check.
func Access(goos string, h protect.Host) func(archive string) error {
	return func(archive string) error {
		return protect.CheckFile(goos, h, "an image archive the node imports into containerd", archive)
	}
}

// Dirs are the folders the node imports archives from: the release's
// images folder beside the executable exe ("" when unknown) and the
// kubeedge directory's.
func Dirs(l config.Layout, exe string) []string {
	var dirs []string
	if exe != "" {
		dirs = append(dirs, l.ReleaseImagesDir(exe))
	}
	if exe == "" || !ospath.Same(l.GOOS, dirs[0], l.ImagesDir) {
		dirs = append(dirs, l.ImagesDir)
	}
	return dirs
}
