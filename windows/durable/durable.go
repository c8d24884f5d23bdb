// Package durable renames a file so that the rename is on disk when the
// call returns. An upgrade writes in its journal what it is about to do,
// then does it, and relies on each step being on disk before the next one
// begins: after a power cut the journal must describe what the disk holds.
// A plain rename does not promise that. NTFS and ext4 keep a rename in
// memory for a while, so a later step (the journal's next phase, the
// service's new command line) may reach the disk while an earlier rename
// does not, and the host boots into a state no phase describes.
//
// On Windows the rename is MoveFileEx with MOVEFILE_WRITE_THROUGH
// (durable_windows.go); elsewhere, where only the tests run, it is
// rename(2) followed by an fsync of the directories (durable_others.go).
// Either way a file's content must have been flushed (os.File.Sync)
// before it is renamed into place: the rename makes the name durable, not
// data still in the cache.
package durable
