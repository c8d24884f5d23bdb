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
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

func main() {
	logs.InitLogs()
	// The one reading of this machine's facts (host name, default route,
	// %ProgramFiles%, %SystemDrive%) and of this program's path, with the
	// host's probes, clock, ACLs and service manager: every command and
	// the node take them from here.
	exe, exeErr := os.Executable()
	code := run(os.Args[1:], deps.ForHost(config.CurrentHost(runtime.GOOS), exe, exeErr))
	logs.FlushLogs()
	os.Exit(code)
}
