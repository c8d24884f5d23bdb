// Command kube-controller-manager is the Kubernetes controller manager of
// the end-to-end tests, built from the same module graph (KubeEdge's
// Kubernetes fork) as edgecore and the test's kube-apiserver. The tests run
// only its node lifecycle controller, the part of a cluster that decides
// whether a node is Ready: it marks a node whose heartbeats stopped
// Ready=Unknown, as in any cluster an operator joins an edge node to.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
