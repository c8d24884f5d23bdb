//go:build !windows

package hostprobe

import (
	"fmt"
	"syscall"
)

// Free space and size come from statfs, so that the Linux build (the e2e's
// and the disk-full scenario's node) judges its volumes by the same rules
// as the Windows one.

// diskSpace is the space available to this user (blocks reserved for root
// left out, as GetDiskFreeSpaceEx leaves out quotas) and the size of the
// volume of dir.
func diskSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	bsize := uint64(st.Bsize) //nolint:unconvert // int64 on linux, uint32 elsewhere
	return st.Bavail * bsize, st.Blocks * bsize, nil
}
