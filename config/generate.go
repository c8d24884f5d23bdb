package config

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// Kind of configuration to print.
const (
	KindMinimal = "minimal"
	KindDefault = "default"
)

// Sample returns the configuration edgecore prints for --minconfig
// (KindMinimal) or --defaultconfig (KindDefault) on goos.
func Sample(kind, goos string) (*v1alpha2.EdgeCoreConfig, error) {
	switch kind {
	case KindMinimal:
		return v1alpha2.NewMinEdgeCoreConfig(), nil
	case KindDefault:
		return v1alpha2.NewDefaultEdgeCoreConfig(), nil
	}
	return nil, fmt.Errorf("unknown kind of sample config %q: use %q or %q", kind, KindMinimal, KindDefault)
}

// Render is the text printed for a sample: a comment saying what it is for,
// then the YAML, which parses back with Parse.
func Render(kind, goos string) ([]byte, error) {
	c, err := Sample(kind, goos)
	if err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("render %s config: %w", kind, err)
	}
	header := "# Minimal edgecore configuration: set modules.edgeHub.httpServer, websocket.server\n" +
		"# and token (from `keadm gettoken` on the cloud side), then start edgecore with --config.\n"
	if kind == KindDefault {
		header = "# Full edgecore configuration with every field at its default value.\n"
	}
	return append([]byte(header), body...), nil
}
