package upgrade

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubeedge-windows/edgecore/config"
)

func TestUpgradeOptionsFlagsAndComplete(t *testing.T) {
	o := NewUpgradeOptions()
	fs := pflag.NewFlagSet("upgrade", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.Timeout != DefaultTimeout || o.Service != "edgecore" {
		t.Errorf("defaults %+v", o)
	}
	if f := fs.Lookup("journal"); f == nil || !f.Hidden {
		t.Error("--journal is not hidden")
	}
	if err := fs.Parse([]string{"--package", "x.zip", "--sha256", strings.Repeat("a", 64), "--allow-downgrade", "--timeout", "5m"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(nil); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("x.zip")
	if o.Package != abs || o.SHA256 != strings.Repeat("a", 64) || !o.AllowDowngrade || o.Timeout != 5*time.Minute || o.Resume {
		t.Errorf("parsed %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}

	r := NewUpgradeOptions()
	fs = pflag.NewFlagSet("upgrade", pflag.ContinueOnError)
	r.AddFlags(fs)
	fs.Parse([]string{"--resume", "--journal", `C:\j.json`, "--package", "y.zip"})
	r.Complete(nil)
	// --resume takes nothing else from the flags: the package is neither
	// made absolute nor required.
	if !r.Resume || r.Journal != `C:\j.json` || r.Package != "y.zip" {
		t.Errorf("--resume: %+v", r)
	}
	r.Package, r.Timeout = "", 0
	if err := r.Validate(); err != nil {
		t.Errorf("--resume refused: %v", err)
	}
}

func TestUpgradeOptionsValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		o    UpgradeOptions
		want []string
	}{
		"no package": {UpgradeOptions{Timeout: time.Minute}, []string{`--package: Required value: give the release zip, e.g. --package "C:\Users\admin\Downloads\edgecore-v0.2.0-windows-amd64.zip"`}},
		"timeout":    {UpgradeOptions{Package: "x.zip", Timeout: -time.Second}, []string{`--timeout: Invalid value: "-1s": give how long the new version may take to become healthy, e.g. 3m`}},
		"digest":     {UpgradeOptions{Package: "x.zip", Timeout: time.Minute, SHA256: "md5:x"}, []string{`--sha256: Invalid value: "md5:x": give the zip's SHA-256 as Get-FileHash or sha256sum prints it`}},
		"together":   {UpgradeOptions{SHA256: "abc"}, []string{"--package: Required value", `--timeout: Invalid value: "0s"`, `--sha256: Invalid value: "abc"`}},
	} {
		err := tc.o.Validate()
		var invalid *config.InvalidError
		if !errors.As(err, &invalid) || invalid.What != "upgrade options" || len(invalid.Errs) != len(tc.want) {
			t.Errorf("%s: %v, want %d problems of the upgrade options", name, err, len(tc.want))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nlacks %q", name, err, w)
			}
		}
	}
}

func TestRollbackOptions(t *testing.T) {
	o := NewRollbackOptions()
	fs := pflag.NewFlagSet("rollback", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--to", "v0.1.0", "--timeout", "2m"}); err != nil {
		t.Fatal(err)
	}
	if o.Version != "v0.1.0" || o.Timeout != 2*time.Minute || o.Service != "edgecore" {
		t.Errorf("parsed %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
	o.Timeout = 0
	err := o.Validate()
	if err == nil || err.Error() != `rollback options: not valid:`+"\n"+`  - --timeout: Invalid value: "0s": give how long the restored version may take to run, e.g. 3m` {
		t.Errorf("%q", err)
	}
	r := Refused(KindRollback, err)
	if r.ExitCode() != 1 || !strings.HasPrefix(r.Line(), `result=refused action=rollback reason="rollback options: not valid: - --timeout: Invalid value`) {
		t.Errorf("refused: %s (exit %d)", r.Line(), r.ExitCode())
	}
}
