package main

import (
	"runtime"
	"sync"

	"github.com/kubeedge-windows/edgecore/config"
)

// hostLayout is where edgecore and containerd keep their files on this host
// (%SystemDrive%, %ProgramFiles%): the flags take their defaults from it. It
// is worked out once, since every command's flags are built at start-up
// and config.CurrentHost also asks the OS for the host name and the route.
var hostLayout = sync.OnceValue(func() config.Layout {
	return config.NewLayout(config.CurrentHost(runtime.GOOS))
})
