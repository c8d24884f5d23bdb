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
	// Retire are files (the node's certificate and key) that the new
	// binary must not find, so that it applies for new ones with the
	// token Config carries: they are moved aside once the binary and the
	// configuration are in place, removed once the node passed the
	// health gate with new ones, and put back when it did not.
	Retire []string
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
	j.Retire = a.Retire
	if err := checkRetire(e, j.Retire); err != nil {
		return Result{}, err
	}
	return Execute(ctx, out, e, j)
}

// retiredSuffix names a file moved aside (Journal.Retire) beside itself.
const retiredSuffix = ".retired"

// checkRetire refuses a file to retire outside the KubeEdge directory:
// only the node's own certificate and key are ever moved aside.
func checkRetire(e Env, files []string) error {
	for _, f := range files {
		if !ospath.Within(e.GOOS, e.Paths.KubeEdgeDir, f) || ospath.Same(e.GOOS, e.Paths.KubeEdgeDir, f) {
			return fmt.Errorf("%s is not in %s: only the node's certificate and key there are moved aside for new ones; "+
				"fix: keep the certificate in %s (keadm's default), or rotate it by hand", f, e.Paths.KubeEdgeDir, e.Paths.KubeEdgeDir)
		}
	}
	return nil
}

// retire moves the journal's Retire files aside, after the binary and
// the configuration are in place and before the new binary starts. A
// file already moved (a journal taken over) is left.
func (d *driver) retire() error {
	e, j := d.e, d.j
	for _, f := range j.Retire {
		if err := e.FS.Rename(f, f+retiredSuffix); err != nil {
			if isNotExist(err) {
				if _, serr := e.FS.Stat(f + retiredSuffix); serr == nil {
					continue
				}
			}
			return fmt.Errorf("move %s aside for a new one: %w", f, err)
		}
		d.printf("moved %s aside: %s applies for a new one at its start\n", f, j.To)
	}
	return nil
}

// unretire puts the files retire moved aside back, over whatever the new
// binary wrote in their place.
func (d *driver) unretire() error {
	e, j := d.e, d.j
	for _, f := range j.Retire {
		if _, err := e.FS.Stat(f + retiredSuffix); err != nil {
			if isNotExist(err) {
				continue
			}
			return err
		}
		if err := e.FS.Rename(f+retiredSuffix, f); err != nil {
			return fmt.Errorf("put %s back: %w", f, err)
		}
		d.printf("put %s back\n", f)
	}
	return nil
}

// dropRetired removes the files moved aside once the node runs with new
// ones: the old key was exposed.
func (d *driver) dropRetired() {
	e, j := d.e, d.j
	for _, f := range j.Retire {
		if err := e.FS.Remove(f + retiredSuffix); err != nil && !isNotExist(err) {
			d.printf("warning: could not remove %s: %v; delete it by hand\n", f+retiredSuffix, err)
			continue
		}
		d.printf("removed the old %s\n", f)
	}
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
