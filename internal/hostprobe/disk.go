package hostprobe

// freeDisk and diskSize read diskSpace, the OS's answer for the volume of
// dir (GetDiskFreeSpaceEx on Windows, statfs elsewhere).

func freeDisk(dir string) (uint64, error) {
	free, _, err := diskSpace(dir)
	return free, err
}

func diskSize(dir string) (uint64, error) {
	_, total, err := diskSpace(dir)
	return total, err
}
