//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// consoleKubelet writes `windowsService: false` into the edged section of
// the configuration, as an operator running upstream's edgecore.exe from a
// console must: upstream v1.23 defaults it to true on Windows, and a
// kubelet told it is a service stops at start ("failed OS init: Service
// controller connect failed") when the service manager did not start it.
// Our file leaves the field out (false is its zero value); ours runs the
// kubelet with it off.
//
// The edge then writes it again before each start of its edgecore
// (startEdgecore): upstream's edgecore rewrites its configuration file
// on its first start (the edgeCoreVersion it records, and the token
// blanked once it has its certificates), marshalling the whole
// configuration, and the field's `omitempty` leaves a false out, so the
// next start reads upstream's Windows default, true, and stops. An
// operator who starts upstream's edgecore.exe from a console a second
// time meets the same.
//
// Upstream's edgecore.exe also logs to C:\var\log\kubeedge\edgecore.log
// and exits when that folder is missing ("log: unable to create log");
// keadm makes it, ours makes every folder it names. It is made here, so
// that the reference runs in a Wine prefix ours has not run in first.
func consoleKubelet(t *testing.T, e *edge) {
	t.Helper()
	e.console = true
	if e.driveC != "" {
		if err := os.MkdirAll(filepath.Join(e.driveC, "var", "log", "kubeedge"), 0o755); err != nil {
			fatal(t, err)
		}
	}
	data, err := os.ReadFile(e.cfgPath)
	if err != nil {
		fatal(t, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		fatal(t, err)
	}
	modules, _ := doc["modules"].(map[string]any)
	edged, _ := modules["edged"].(map[string]any)
	if edged == nil {
		fatalf(t, "%s has no modules.edged section", e.cfgPath)
	}
	if set, ok := edged["windowsService"]; ok && set == false {
		return
	}
	if e.starts > 0 {
		t.Logf("%s: the edgecore that ran before left windowsService out of its configuration (upstream's omitempty); writing it again", e.name)
	}
	edged["windowsService"] = false
	if data, err = yaml.Marshal(doc); err == nil {
		err = os.WriteFile(e.cfgPath, data, 0o600)
	}
	if err != nil {
		fatal(t, err)
	}
}
