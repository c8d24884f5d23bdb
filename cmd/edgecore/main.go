// Command edgecore runs a KubeEdge edge node on Windows Server (and, from the
// same sources, on Linux). This package holds main and the cobra command
// tree only: each command parses its flags into options, validates them and
// calls one function of internal/ to do the work.
package main

import (
	"os"
	"runtime"

	"k8s.io/component-base/logs"

	"github.com/kubeedge-windows/edgecore/config"
)

func main() {
	logs.InitLogs()
	// The one reading of this machine's facts (host name, default route,
	// %ProgramFiles%, %SystemDrive%): every command takes them from here.
	code := run(os.Args[1:], config.CurrentHost(runtime.GOOS))
	logs.FlushLogs()
	os.Exit(code)
}
