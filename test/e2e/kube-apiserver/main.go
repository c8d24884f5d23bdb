// Command kube-apiserver is the Kubernetes API server of the end-to-end
// tests, built from the same module graph (KubeEdge's Kubernetes fork) as
// edgecore, so that the cloud side matches the edge exactly.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
