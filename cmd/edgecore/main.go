// Command edgecore runs a KubeEdge edge node on Windows Server (and, from the
// same sources, on Linux). This package holds main and the cobra command
// tree only: each command parses its flags into options, validates them and
// calls one function of internal/ to do the work.
package main

import (
	"os"

	"k8s.io/component-base/logs"
)

func main() {
	logs.InitLogs()
	code := run(os.Args[1:])
	logs.FlushLogs()
	os.Exit(code)
}
