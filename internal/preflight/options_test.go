package preflight

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// Before join there is no configuration: the run says so and checks the
// host against the defaults; a FAIL row makes it ErrProblems with exit
// code 1, and the table names the failed check.
func TestRunChecksBeforeJoin(t *testing.T) {
	o := Options{ConfigFile: filepath.Join(t.TempDir(), "edgecore.yaml"), Host: windowsHost}
	h := healthyHost()
	h.elevated = false
	var out bytes.Buffer
	code, err := RunChecks(context.Background(), &out, o, h.probes())
	if !errors.Is(err, ErrProblems) || code != 1 {
		t.Errorf("not elevated: code %d, %v", code, err)
	}
	text := out.String()
	if !strings.HasPrefix(text, "No configuration at "+o.ConfigFile+" yet") {
		t.Errorf("output does not say the file is missing:\n%s", text)
	}
	if !strings.Contains(text, "FAIL    "+nameElevated) {
		t.Errorf("no FAIL row for %s:\n%s", nameElevated, text)
	}
}

func TestOptionsValidateNamesAnEmptyConfig(t *testing.T) {
	host := config.Host{GOOS: config.Windows}
	o := NewOptions(&deps.Dependencies{Host: host, Layout: config.NewLayout(host)})
	if err := o.Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	o.ConfigFile = ""
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--config is empty`) || !strings.Contains(err.Error(), `C:\etc\kubeedge\config\edgecore.yaml`) {
		t.Errorf("empty --config: %v", err)
	}
}

// Before join, on a host with neither a container runtime nor a pod
// network, the release's bundled runtime makes their absence what join
// does next: WARN and SKIP rows that say so instead of FAIL rows; without
// the bundle they fail with the fix.
func TestRunChecksBeforeJoinWithTheBundledRuntime(t *testing.T) {
	const release = `C:\Program Files\edgecore`
	run := func(withBundle bool) (string, int) {
		t.Helper()
		o := Options{ConfigFile: filepath.Join(t.TempDir(), "edgecore.yaml"), Host: windowsHost, ReleaseDir: release}
		h := healthyHost()
		h.criErr = errors.New(`open \\.\pipe\containerd-containerd: The system cannot find the file specified.`)
		h.files = map[string]string{}
		if withBundle {
			h.files[release+`\runtime\manifest.json`] = `{"containerd":"v2.1.4"}`
		}
		var out bytes.Buffer
		code, _ := RunChecks(context.Background(), &out, o, h.probes())
		return out.String(), code
	}
	text, code := run(true)
	for _, want := range []string{
		"WARN    " + nameCRI,
		`join installs containerd from C:\Program Files\edgecore\runtime as the containerd service`,
		"SKIP    " + nameCRINetwork,
		"SKIP    " + nameCNIConfig,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("with the bundle, the output lacks %q:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "FAIL") && (strings.Contains(line, nameCRI) || strings.Contains(line, "CNI")) {
			t.Errorf("with the bundle, a FAIL row about what join installs: %q", line)
		}
	}
	if code != 0 {
		t.Errorf("with the bundle on an otherwise healthy host: exit %d\n%s", code, text)
	}

	text, code = run(false)
	if !strings.Contains(text, "FAIL    "+nameCRI) || !strings.Contains(text, "FAIL    "+nameCNIConfig) || code != 1 {
		t.Errorf("without the bundle the runtime and CNI rows must fail (exit %d):\n%s", code, text)
	}
}
