// Command edgecore runs a KubeEdge edge node on Windows Server (and, from the
// same sources, on Linux).
package main

import (
	"os"

	"k8s.io/component-base/logs"

	"github.com/kubeedge-windows/edgecore/edge/app"
)

func main() {
	logs.InitLogs()
	code := app.Main(os.Args[1:])
	logs.FlushLogs()
	os.Exit(code)
}
