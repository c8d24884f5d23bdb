//go:build wine

package wine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := run(t, time.Minute, args...)
		if r.code != 0 {
			t.Fatalf("%v exited %d: %s", args, r.code, r.stderr)
		}
		for _, want := range []string{
			"edgecore for Windows v",
			"KubeEdge:   v1.20.0",
			"Kubernetes: v1.30.7-kubeedge1",
			"Git commit: ",
			"windows/amd64",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v output lacks %q:\n%s", args, want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "Git commit: unknown") {
			t.Errorf("%v: the build did not stamp the git commit:\n%s", args, r.stdout)
		}
	}
}

func TestSampleConfigsParseBack(t *testing.T) {
	for _, flag := range []string{"--minconfig", "--defaultconfig"} {
		r := run(t, time.Minute, flag)
		if r.code != 0 {
			t.Fatalf("%s exited %d: %s", flag, r.code, r.stderr)
		}
		c, err := config.Parse([]byte(r.stdout))
		if err != nil {
			t.Fatalf("%s output does not parse back: %v\n%s", flag, err, r.stdout)
		}
		if c.Kind != "EdgeCore" || c.APIVersion != "edgecore.config.kubeedge.io/v1alpha2" {
			t.Errorf("%s: kind %q apiVersion %q", flag, c.Kind, c.APIVersion)
		}
		if !c.Modules.Edged.Enable || !c.Modules.MetaManager.Enable {
			t.Errorf("%s: edged or metamanager is not enabled", flag)
		}
	}
}

func TestMissingConfigFile(t *testing.T) {
	const path = `C:\no\such\dir\edgecore.yaml`
	r := run(t, time.Minute, "--config", path)
	if r.code == 0 {
		t.Fatal("a missing config file did not make edgecore.exe fail")
	}
	if !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "edgecore.exe --minconfig") {
		t.Errorf("the error does not name the path and point to --minconfig:\n%s", r.stderr)
	}
}

// With edgehub off, edgecore.exe must get as far as the embedded kubelet,
// which then reports the missing container runtime by its endpoint; without
// containerd the process exits on its own.
func TestStartsKubeletAndNamesMissingCRI(t *testing.T) {
	min := run(t, time.Minute, "--minconfig")
	if min.code != 0 {
		t.Fatalf("--minconfig exited %d", min.code)
	}
	c, err := config.Parse([]byte(min.stdout))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c.Modules.EdgeHub.Enable = false
	// A database directory that does not exist yet: edgecore must create it.
	c.DataBase.DataSource = toWindowsPath(filepath.Join(dir, "db", "edgecore.db"))
	cfgPath := filepath.Join(dir, "edgecore.yaml")
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}

	r := run(t, 3*time.Minute, "--config", toWindowsPath(cfgPath))
	log := r.stdout + r.stderr
	for _, want := range []string{
		"Module edged registered successfully",
		"Module metamanager registered successfully",
		"starting module edged",
		"starting module metamanager",
		"Starting edged",
		`"Kubelet version" kubeletVersion="v1.30.7-kubeedge1"`,
		"npipe://./pipe/containerd-containerd",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if r.code == 0 {
		t.Error("edgecore.exe exited 0 although the kubelet could not reach a container runtime")
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "edgecore.db")); err != nil {
		t.Errorf("the database was not created: %v", err)
	}
	if t.Failed() {
		t.Logf("edgecore.exe log:\n%s", log)
	}
}
