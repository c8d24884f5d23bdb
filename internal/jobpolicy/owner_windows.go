package jobpolicy

import "io/fs"

// fileOwner has no uid to give on Windows, where HostJudge judges the
// file's security descriptor instead.
func fileOwner(fs.FileInfo) (uint32, bool) { return 0, false }
