//go:build !windows

package hostprobe

import (
	"errors"
	"runtime"
)

var errNotWindows = errors.New("not supported on " + runtime.GOOS + ": run preflight on the Windows host")

func windowsVersion() (WindowsVersion, error) { return WindowsVersion{}, errNotWindows }

func containersFeature() (bool, error) { return false, errNotWindows }

func elevated() (bool, error) { return false, errNotWindows }
