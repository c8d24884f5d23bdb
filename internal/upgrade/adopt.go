package upgrade

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Adoption is an edgecore service that another installer set up (upstream's
// keadm) and that this build takes over: the service's own binary is
// replaced by Binary, its configuration by Config, as one upgrade.
type Adoption struct {
	// Installed is what the service runs now.
	Installed Installed
	// FromLabel names the installation in the journal, the result and
	// the backup (with the time), e.g. "keadm": upstream's binary says no
	// version of this release line.
	FromLabel string
	// Binary is the edgecore.exe that replaces Installed.Executable: the
	// running takeover command's own. Config is the configuration it runs
	// with (config.Adopt's Data).
	Binary  string
	Config  []byte
	Timeout time.Duration
}

// Adopt stages a's binary and configuration beside the upgrade's other
// state and carries them out as an upgrade journal: the service is
// stopped, its binary, configuration and database backed up, the binary
// and then the configuration replaced, the service started and held to
// the health gate (the hub connected and the node Ready, reported by the
// new binary), and everything put back from the backup if it fails. An
// interruption is finished or rolled back by the next edgecore that
// starts, as an upgrade's is.
func Adopt(ctx context.Context, out io.Writer, e Env, a Adoption) (Result, error) {
	in := a.Installed
	dir := e.Paths.Staging(e.Version)
	if err := e.FS.MkdirAll(dir); err != nil {
		return Result{}, err
	}
	if err := e.Restrict(e.Paths.StateDir); err != nil {
		return Result{}, fmt.Errorf("restrict %s to SYSTEM and Administrators: %w", e.Paths.StateDir, err)
	}
	bin := ospath.Join(e.GOOS, dir, config.ExecutableName(e.GOOS))
	if !ospath.Same(e.GOOS, a.Binary, bin) {
		if err := e.FS.CopyFile(a.Binary, bin); err != nil {
			return Result{}, fmt.Errorf("stage %s: %w", a.Binary, err)
		}
	}
	binSum, err := e.FS.SHA256(bin)
	if err != nil {
		return Result{}, err
	}
	cfg := ospath.Join(e.GOOS, dir, backupConfig)
	if err := e.FS.WriteFile(cfg, a.Config); err != nil {
		return Result{}, fmt.Errorf("stage the configuration: %w", err)
	}
	cfgSum, err := e.FS.SHA256(cfg)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "staged %s and the configuration it runs with, %s\n", bin, cfg)

	j := newJournal(e, KindUpgrade, in, a.Timeout)
	// Named by the installer, never by a version of this release line:
	// the backup must not be mistaken for (or overwrite) a release's.
	j.From = a.FromLabel
	j.To, j.Backup = e.Version, e.Paths.Backup(a.FromLabel+"-"+e.Clock.Now().UTC().Format("20060102T150405Z"))
	j.Staged, j.StagedSHA256 = bin, binSum
	j.StagedConfig, j.StagedConfigSHA256 = cfg, cfgSum
	return Execute(ctx, out, e, j)
}

// placeConfig puts a takeover's configuration in place once the binary
// that reads it is (see placeBinary); the backup holds the old one.
func (d *driver) placeConfig() error {
	e, j := d.e, d.j
	if j.StagedConfig == "" {
		return nil
	}
	if got, err := e.FS.SHA256(j.StagedConfig); err != nil || got != j.StagedConfigSHA256 {
		return fmt.Errorf("%s does not match the checksum it was staged with (%v): it changed on disk; start again", j.StagedConfig, err)
	}
	if err := e.FS.CopyPrivate(j.StagedConfig, j.ConfigFile); err != nil {
		return fmt.Errorf("replace %s: %w", j.ConfigFile, err)
	}
	d.printf("%s is now the configuration %s runs with\n", j.ConfigFile, j.To)
	return nil
}
