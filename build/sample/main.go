// Command sample prints the sample configuration shipped in the release
// package: the Windows minimal configuration for a placeholder host, without
// a node IP so that nothing of the build machine ends up in it.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
)

func main() {
	c, err := config.Sample(config.KindMinimal, config.Host{GOOS: config.Windows, Hostname: "edge-node-1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Empty: edgecore then uses the address it reaches the cloud from.
	c.Modules.Edged.NodeIP = ""
	body, err := yaml.Marshal(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print("# Sample edgecore configuration for Windows Server.\n" +
		"# Rather than editing it, generate one for this host with:\n" +
		"#   edgecore.exe config --cloudcore-ipport <cloudcore address>:10000 --token <output of keadm gettoken>\n")
	os.Stdout.Write(body)
}
