//go:build !windows && !linux

package memlimit

// HostMemory is unknown on this platform: no limit is derived from it.
func HostMemory() uint64 { return 0 }
