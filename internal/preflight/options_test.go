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
