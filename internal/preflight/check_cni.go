package preflight

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/kubeedge-windows/edgecore/config/cni"
)

const (
	nameCNIConfig = "CNI config"
	nameCNIPlugin = "CNI plugin"
)

const writeCNIConfig = "write one: edgecore.exe cni-config --subnet <pod range>"

func checkCNIConfig(cfg Config, p Probes) []Row {
	if p.ReadDir == nil || p.ReadFile == nil {
		return []Row{notProbed(nameCNIConfig), notProbed(nameCNIPlugin)}
	}
	names, err := p.ReadDir(cfg.CNIConfDir)
	if errors.Is(err, fs.ErrNotExist) {
		if cfg.BundledRuntime != "" {
			return []Row{skip(nameCNIConfig, cfg.CNIConfDir+" does not exist yet: join writes the pod network there, with the plugins from "+cfg.BundledRuntime)}
		}
		return []Row{fail(nameCNIConfig, cfg.CNIConfDir+" does not exist", writeCNIConfig)}
	}
	if err != nil {
		return []Row{fail(nameCNIConfig, "cannot list "+cfg.CNIConfDir+": "+oneLine(err.Error()), "run as Administrator, or check the folder's permissions")}
	}
	loaded, ignored := cni.PickConfFile(names)
	if loaded == "" {
		if cfg.BundledRuntime != "" {
			return []Row{skip(nameCNIConfig, "no .conf, .conflist or .json file in "+cfg.CNIConfDir+" yet: join writes the pod network there")}
		}
		return []Row{fail(nameCNIConfig, "no .conf, .conflist or .json file in "+cfg.CNIConfDir, writeCNIConfig)}
	}
	path := joinPath(cfg.CNIConfDir, loaded)
	data, err := p.ReadFile(path)
	if err != nil {
		return []Row{fail(nameCNIConfig, "cannot read "+path+": "+oneLine(err.Error()), "run as Administrator, or check the file's permissions")}
	}
	var rows []Row
	for _, f := range cni.Validate(data, cni.ValidateOptions{ClusterDNS: cfg.ClusterDNS}) {
		what := path + ": " + f.Problem
		if f.Field != "" {
			what = path + ": " + f.Field + " " + f.Problem
		}
		if f.Severity == cni.SeverityError {
			rows = append(rows, fail(nameCNIConfig, what, f.Fix))
		} else {
			rows = append(rows, warn(nameCNIConfig, what, f.Fix))
		}
	}
	if len(ignored) > 0 {
		// containerd reads the first file only; a newer file that sorts
		// later is a fix that never takes effect.
		rows = append(rows, warn(nameCNIConfig, "containerd loads only "+loaded+" and ignores "+strings.Join(ignored, ", "),
			"remove the files containerd ignores so that the one it loads is not in doubt"))
	}
	if len(rows) == 0 {
		rows = append(rows, pass(nameCNIConfig, path+summarize(data)))
	}
	return append(rows, checkCNIPlugins(cfg, p, data)...)
}

// summarize names the network in the PASS row so the operator can see
// which range pods will get.
func summarize(data []byte) string {
	var c struct {
		Type string `json:"type"`
		IPAM struct {
			Subnet string `json:"subnet"`
		} `json:"ipam"`
	}
	if json.Unmarshal(data, &c) != nil || c.Type == "" {
		return ""
	}
	if c.IPAM.Subnet == "" {
		return " (" + c.Type + ")"
	}
	return fmt.Sprintf(" (%s, pods in %s)", c.Type, c.IPAM.Subnet)
}

// checkCNIPlugins looks for the executable of every plugin the config
// names: without it containerd reports the network as not ready.
func checkCNIPlugins(cfg Config, p Probes, data []byte) []Row {
	var c struct {
		Type    string `json:"type"`
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if json.Unmarshal(data, &c) != nil {
		return nil // already reported by the validator
	}
	var types []string
	if c.Type != "" {
		types = append(types, c.Type)
	}
	for _, pl := range c.Plugins {
		if pl.Type != "" {
			types = append(types, pl.Type)
		}
	}
	if len(types) == 0 {
		return nil
	}
	names, err := p.ReadDir(cfg.CNIBinDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return []Row{couldNotCheck(nameCNIPlugin, err)}
	}
	have := map[string]bool{}
	for _, n := range names {
		have[strings.ToLower(n)] = true
	}
	var missing, found []string
	for _, t := range types {
		exe := t + ".exe"
		if have[strings.ToLower(exe)] {
			found = append(found, exe)
		} else {
			missing = append(missing, exe)
		}
	}
	if len(missing) > 0 {
		return []Row{fail(nameCNIPlugin, strings.Join(missing, ", ")+" not found in "+cfg.CNIBinDir,
			"copy the plugin executables (nat.exe from microsoft/windows-container-networking) into "+cfg.CNIBinDir)}
	}
	return []Row{pass(nameCNIPlugin, strings.Join(found, ", ")+" in "+cfg.CNIBinDir)}
}

// joinPath joins with the separator dir already uses, so Windows paths stay
// Windows paths in the output wherever the tests run.
func joinPath(dir, name string) string {
	sep := `\`
	if strings.Contains(dir, "/") && !strings.Contains(dir, `\`) {
		sep = "/"
	}
	return strings.TrimRight(dir, `\/`) + sep + name
}
