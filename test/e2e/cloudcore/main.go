// Command cloudcore is upstream KubeEdge's cloudcore, built from the same
// module graph as edgecore (and against this project's beehive) for the
// end-to-end tests.
package main

import (
	"os"

	"k8s.io/component-base/logs"

	"github.com/kubeedge/kubeedge/cloud/cmd/cloudcore/app"
)

func main() {
	cmd := app.NewCloudCoreCommand()
	logs.InitLogs()
	err := cmd.Execute()
	logs.FlushLogs()
	if err != nil {
		os.Exit(1)
	}
}
