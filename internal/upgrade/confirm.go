package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/deps"
)

// A NodeUpgradeJob with requireConfirmation stops after its
// WaitingConfirmation action until an operator on the node says go.
// Upstream's node keeps the job in its database and `keadm ctl confirm`
// asks the node's metaserver, a loopback HTTP port, to run the rest. A
// Windows node has neither keadm nor an open loopback port: the job waits
// in a file of the upgrade's state directory (Paths.Waiting), which only
// SYSTEM and Administrators may write, `edgecore.exe upgrade confirm`
// writes the confirmation beside it (Paths.Confirmed), and the running
// edgecore, which polls for it every second, goes on with the job. So
// confirming takes what replacing the node's binary takes: an
// administrator on the host. The wait survives a restart of edgecore.

// Waiting is a NodeUpgradeJob that waits for the operator's confirmation.
type Waiting struct {
	Job     string `json:"job"`
	Node    string `json:"node"`
	Version string `json:"version"`
	// Spec is the job's spec as the cloud sent it: the rest of the job
	// runs from it.
	Spec  json.RawMessage `json:"spec"`
	Since time.Time       `json:"since"`
}

// confirmation is what `edgecore.exe upgrade confirm` writes: the job it
// confirms, by its name, the version it goes to and the digest of its
// spec, so that it never confirms another job, nor one of the same name
// that the cloud sent again with another version or spec between the
// operator's look and the confirmation.
type confirmation struct {
	Job        string    `json:"job"`
	Version    string    `json:"version"`
	SpecDigest string    `json:"specDigest"`
	At         time.Time `json:"at"`
}

// SpecDigest is the SHA-256 of the job's spec as the cloud sent it, as
// `upgrade confirm` shows it and the confirmation records it.
func (w Waiting) SpecDigest() string {
	d := sha256.Sum256(w.Spec)
	return "sha256:" + hex.EncodeToString(d[:])
}

// confirms reports whether c is the confirmation of w.
func (c confirmation) confirms(w Waiting) bool {
	return c.Job == w.Job && c.Version == w.Version && c.SpecDigest == w.SpecDigest()
}

// Wait records w as the job that waits for confirmation. A job already
// waiting is replaced, as upstream's node replaces it: the cloud ends it
// at its timeout.
func Wait(e Env, w Waiting) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := e.FS.MkdirAll(e.Paths.StateDir); err != nil {
		return fmt.Errorf("create %s: %w", e.Paths.StateDir, err)
	}
	if err := e.FS.Remove(e.Paths.Confirmed); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the confirmation of an earlier job, %s: %w", e.Paths.Confirmed, err)
	}
	if err := e.FS.WriteFile(e.Paths.Waiting, data); err != nil {
		return fmt.Errorf("record NodeUpgradeJob %s as waiting for confirmation in %s: %w", w.Job, e.Paths.Waiting, err)
	}
	return nil
}

// LoadWaiting is the job that waits for confirmation, or nil.
func LoadWaiting(e Env) (*Waiting, error) {
	data, err := e.FS.ReadFile(e.Paths.Waiting)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w%s", e.Paths.Waiting, err, elevateHint(err))
	}
	var w Waiting
	if err := json.Unmarshal(data, &w); err != nil || w.Job == "" || len(w.Spec) == 0 {
		return nil, fmt.Errorf("%s does not hold a NodeUpgradeJob waiting for confirmation (%v): delete it; the cloud then ends the job at its timeout", e.Paths.Waiting, err)
	}
	return &w, nil
}

// Confirm records the operator's confirmation of the waiting job; job,
// when not empty, must be its name.
func Confirm(e Env, job string) (Waiting, error) {
	w, err := LoadWaiting(e)
	if err != nil {
		return Waiting{}, err
	}
	if w == nil {
		return Waiting{}, fmt.Errorf("no NodeUpgradeJob waits for confirmation on this node (there is no %s): a job waits only when it sets requireConfirmation and has passed its Check", e.Paths.Waiting)
	}
	if job != "" && job != w.Job {
		return Waiting{}, &config.InvalidError{What: "upgrade confirm options", Errs: field.ErrorList{
			field.Invalid(field.NewPath(flagJob), job, fmt.Sprintf("the job waiting on this node is %s (to %s): give --job %s, or leave --job out", w.Job, w.Version, w.Job))}}
	}
	data, err := json.Marshal(confirmation{Job: w.Job, Version: w.Version, SpecDigest: w.SpecDigest(), At: e.Clock.Now().UTC()})
	if err != nil {
		return Waiting{}, err
	}
	if err := e.FS.WriteFile(e.Paths.Confirmed, data); err != nil {
		return Waiting{}, fmt.Errorf("write the confirmation %s: %w%s", e.Paths.Confirmed, err, elevateHint(err))
	}
	return *w, nil
}

// elevateHint is the fix for an error of a command that was not run
// elevated: the upgrade's state directory is open to SYSTEM and
// Administrators only.
func elevateHint(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return ` (the directory is open to Administrators only: run the command from PowerShell started with "Run as administrator")`
	}
	return ""
}

// TakeConfirmation is the waiting job once it is confirmed, or nil. The
// job is taken once: its files are removed before it is returned, so a
// crash afterwards leaves the job to the cloud's timeout rather than
// running it twice.
func TakeConfirmation(e Env) (*Waiting, error) {
	w, err := LoadWaiting(e)
	if err != nil || w == nil {
		return nil, err
	}
	data, err := e.FS.ReadFile(e.Paths.Confirmed)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", e.Paths.Confirmed, err)
	}
	var c confirmation
	if err := json.Unmarshal(data, &c); err != nil || !c.confirms(*w) {
		// Not for this job, this version or this spec: Wait removes a
		// confirmation it finds, and nothing else writes one; the
		// operator confirms again.
		return nil, nil
	}
	if err := e.FS.Remove(e.Paths.Waiting); err != nil {
		return nil, fmt.Errorf("remove %s: %w", e.Paths.Waiting, err)
	}
	if err := e.FS.Remove(e.Paths.Confirmed); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w", e.Paths.Confirmed, err)
	}
	return w, nil
}

// AwaitConfirmation looks for the confirmation of the waiting job every
// poll and hands the job to proceed once it is confirmed. It returns then,
// when no job waits any more, or when ctx ends.
func AwaitConfirmation(ctx context.Context, e Env, proceed func(Waiting), logf func(string, ...any)) {
	for {
		w, err := TakeConfirmation(e)
		if err != nil {
			logf("NodeUpgradeJob confirmation: %v", err)
		}
		if w != nil {
			logf("NodeUpgradeJob %s: confirmed on the node; upgrading to %s", w.Job, w.Version)
			proceed(*w)
			return
		}
		if err == nil {
			if still, err := LoadWaiting(e); err == nil && still == nil {
				return
			}
		}
		if e.sleep(ctx, poll) {
			return
		}
	}
}

// ConfirmOptions are the inputs of `edgecore.exe upgrade confirm`.
type ConfirmOptions struct {
	// Job is the job to confirm (--job); "" is the one that waits.
	Job string
	// Timeout bounds the wait for edgecore to take the confirmation.
	Timeout time.Duration
}

const flagJob = "--job"

// NewConfirmOptions are confirm's defaults.
func NewConfirmOptions() *ConfirmOptions {
	return &ConfirmOptions{Timeout: 30 * time.Second}
}

// AddFlags binds confirm's flags to o; the defaults are o's values.
func (o *ConfirmOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Job, "job", o.Job, "Name of the NodeUpgradeJob to confirm; the command refuses when another one waits")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the running edgecore to take the confirmation")
}

// Complete is the options contract's: confirm's flags need nothing of the
// host.
func (o *ConfirmOptions) Complete(*deps.Dependencies) error { return nil }

// Validate checks confirm's flags, naming each flag, its value and the fix.
func (o ConfirmOptions) Validate() error {
	var errs field.ErrorList
	if o.Timeout <= 0 {
		errs = append(errs, field.Invalid(field.NewPath(flagTimeout), o.Timeout.String(), "give how long to wait for edgecore to take the confirmation, e.g. 30s"))
	}
	if o.Job != "" {
		for _, msg := range validation.IsDNS1123Subdomain(o.Job) {
			errs = append(errs, field.Invalid(field.NewPath(flagJob), o.Job, msg+": give the job's name as kubectl get nodeupgradejobs shows it"))
		}
	}
	if len(errs) > 0 {
		return &config.InvalidError{What: "upgrade confirm options", Errs: errs}
	}
	return nil
}

// ConfirmAndWait confirms the waiting job and waits, at most o.Timeout,
// for the running edgecore to take it, saying on out what happens.
func ConfirmAndWait(ctx context.Context, out io.Writer, e Env, o ConfirmOptions) error {
	w, err := Confirm(e, o.Job)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "NodeUpgradeJob %s (to %s, spec %s, waiting since %s) confirmed.\n", w.Job, w.Version, w.SpecDigest(), w.Since.UTC().Format(time.RFC3339))
	deadline := e.Clock.Now().Add(o.Timeout)
	for {
		still, err := LoadWaiting(e)
		if err == nil && (still == nil || still.Job != w.Job || !still.Since.Equal(w.Since)) {
			fmt.Fprintf(out, "edgecore took the confirmation: it backs up and upgrades to %s now. Follow the job with: kubectl get nodeupgradejob %s -o yaml\n", w.Version, w.Job)
			return nil
		}
		if !e.Clock.Now().Before(deadline) || e.sleep(ctx, poll) {
			return fmt.Errorf("edgecore has not taken the confirmation within %s: check that the service runs (Get-Service %s); the confirmation stays in %s and is taken when edgecore runs", o.Timeout, e.Service, e.Paths.Confirmed)
		}
	}
}
