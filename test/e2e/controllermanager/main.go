// Command controller-manager is upstream KubeEdge's controller-manager, built
// from the same module graph as edgecore and cloudcore for the end-to-end
// tests. Since KubeEdge v1.21 it is the part of the cloud that takes a
// v1alpha2 NodeUpgradeJob (or ImagePrePullJob, ConfigUpdateJob), resolves
// its nodes and marks it for cloudcore's taskManager to send; without it a
// job keeps an empty status.
package main

import (
	"os"

	"k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/logs"

	"github.com/kubeedge/kubeedge/cloud/cmd/controllermanager/app"
)

func main() {
	cmd := app.NewControllerManagerCommand(server.SetupSignalContext())
	logs.InitLogs()
	err := cmd.Execute()
	logs.FlushLogs()
	if err != nil {
		os.Exit(1)
	}
}
