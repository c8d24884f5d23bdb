package jobpolicy

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// HostJudge is the judge of the policy file on a host of goos: on
// Windows, protect's rule for a file the node acts on as SYSTEM without
// owning it (its owner SYSTEM, Administrators or TrustedInstaller, no
// other account allowed to change it or rename a folder above it); on
// other hosts, owned by root and writable by nobody else.
func HostJudge(goos string, acls protect.Host) Judge {
	if goos == config.Windows {
		return func(path string) error {
			return protect.Check([]protect.Target{{
				What: "the node's cloud-job policy, which widens what cloud jobs may change",
				Path: path, File: true, Input: true,
			}}, acls, protect.Starting)
		}
	}
	return func(path string) error {
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		uid, ok := fileOwner(fi)
		if !ok {
			return fmt.Errorf("%s: its owner cannot be read", path)
		}
		return judgePOSIX(path, uid, fi.Mode())
	}
}

// judgePOSIX refuses a policy file that is not a regular file owned by
// root, or that others may write.
func judgePOSIX(path string, uid uint32, mode fs.FileMode) error {
	switch {
	case !mode.IsRegular():
		return fmt.Errorf("%s is not a regular file (%s); fix: replace it with a file", path, mode.Type())
	case uid != 0:
		return fmt.Errorf("%s is owned by uid %d, not root; fix: check what it says, then `chown root:root %s`", path, uid, path)
	case mode.Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by others (mode %s); fix: `chmod go-w %s`", path, mode.Perm(), path)
	}
	return nil
}
