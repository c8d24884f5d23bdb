package upgrade

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// UpgradeOptions are the inputs of `edgecore.exe upgrade`.
type UpgradeOptions struct {
	// Package is the release zip (--package).
	Package string
	// SHA256 is the zip's expected checksum (--sha256), optional.
	SHA256 string
	// AllowDowngrade accepts an older package (--allow-downgrade).
	AllowDowngrade bool
	// Timeout bounds the health gate (--timeout).
	Timeout time.Duration
	// Service is the service name.
	Service string
	// Resume (--resume) only finishes an upgrade or rollback an earlier
	// process left unfinished; Journal (--journal) is the planned journal
	// it then carries out, as the NodeUpgradeJob executor hands it over.
	Resume  bool
	Journal string
}

// RollbackOptions are the inputs of `edgecore.exe rollback`.
type RollbackOptions struct {
	// Version picks the backup to restore (--to); "" is the one the
	// last upgrade made, or else the newest of another version.
	Version string
	// Timeout bounds the wait for the restored version to run.
	Timeout time.Duration
	Service string
}

// Flag names errors point at.
const (
	flagPackage = "--package"
	flagTimeout = "--timeout"
	flagSHA256  = "--sha256"
	flagVersion = "--to"
)

// NewUpgradeOptions are upgrade's defaults: the edgecore service, and
// DefaultTimeout for the health gate.
func NewUpgradeOptions() *UpgradeOptions {
	return &UpgradeOptions{Timeout: DefaultTimeout, Service: service.DefaultName}
}

// AddFlags binds upgrade's flags to o; the defaults are o's values.
func (o *UpgradeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Package, "package", o.Package, "Release zip to install: edgecore-<version>-windows-amd64.zip as `make package` builds it")
	fs.StringVar(&o.SHA256, "sha256", o.SHA256, "Expected SHA-256 of the zip (as Get-FileHash or sha256sum prints it), checked before anything else")
	fs.BoolVar(&o.AllowDowngrade, "allow-downgrade", o.AllowDowngrade, "Install a version older than the installed one")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long the new version may take to keep running with the hub connected and the node Ready")
	fs.BoolVar(&o.Resume, "resume", o.Resume, "Finish an upgrade or rollback that an earlier process left unfinished, and nothing else")
	fs.StringVar(&o.Journal, "journal", o.Journal, "With --resume: carry out this planned journal (used by the NodeUpgradeJob executor)")
	fs.MarkHidden("journal")
}

// Complete makes --package absolute: the package is read from the
// directory the command runs in, whatever the process that drives the
// upgrade later runs in. It needs nothing of d.
func (o *UpgradeOptions) Complete(*deps.Dependencies) error {
	if o.Resume || o.Package == "" {
		return nil
	}
	abs, err := filepath.Abs(o.Package)
	if err != nil {
		return fmt.Errorf("--package %s: %w", o.Package, err)
	}
	o.Package = abs
	return nil
}

// Validate checks the flags of an upgrade, naming each flag, its value and
// the fix. --resume takes nothing else from the flags: the journal says
// what to finish.
func (o UpgradeOptions) Validate() error {
	if o.Resume {
		return nil
	}
	var errs field.ErrorList
	if o.Package == "" {
		errs = append(errs, field.Required(field.NewPath(flagPackage), "give the release zip, e.g. --package \"C:\\Users\\admin\\Downloads\\edgecore-v0.2.0-windows-amd64.zip\""))
	}
	if o.Timeout <= 0 {
		errs = append(errs, field.Invalid(field.NewPath(flagTimeout), o.Timeout.String(), "give how long the new version may take to become healthy, e.g. 3m"))
	}
	if o.SHA256 != "" {
		if _, err := release.ParseDigest(o.SHA256); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(flagSHA256), o.SHA256, "give the zip's SHA-256 as Get-FileHash or sha256sum prints it"))
		}
	}
	if len(errs) > 0 {
		return &config.InvalidError{What: "upgrade options", Errs: errs}
	}
	return nil
}

// NewRollbackOptions are rollback's defaults: the edgecore service, and
// DefaultTimeout for the restored version to run.
func NewRollbackOptions() *RollbackOptions {
	return &RollbackOptions{Timeout: DefaultTimeout, Service: service.DefaultName}
}

// AddFlags binds rollback's flags to o; the defaults are o's values.
func (o *RollbackOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Version, "to", o.Version, "Version whose backup to restore, e.g. v0.1.0")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long the restored version may take to keep running")
}

// Complete is the options contract's: a rollback's flags need nothing of
// the host.
func (o *RollbackOptions) Complete(*deps.Dependencies) error { return nil }

// Validate checks the flags of a rollback. --to is checked against the
// backups when one is chosen (chooseBackup), where the fix can name them.
func (o RollbackOptions) Validate() error {
	if o.Timeout <= 0 {
		return &config.InvalidError{What: "rollback options", Errs: field.ErrorList{
			field.Invalid(field.NewPath(flagTimeout), o.Timeout.String(), "give how long the restored version may take to run, e.g. 3m")}}
	}
	return nil
}

// Refused is the result of a command that refused its options before it
// looked at the host: action k, exit code 1.
func Refused(k Kind, err error) Result {
	return Result{Action: k, Status: StatusRefused, Reason: err.Error()}
}
