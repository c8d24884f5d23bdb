package upgrade

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// keadmBin is upstream's edgecore as keadm installed it: it runs, but
// writes no health record and tells no version of this release line.
const (
	keadmBin    = "upstream edgecore v1.23.1 binary"
	keadmConfig = "keadm's config with windowsService: true"
	ourConfig   = "the config with windowsService: false"
)

// keadmHost is newHost with the service running keadm's binary and
// configuration, and this build's binary (newBin, or badBin) at ours.
func keadmHost(ours string) (*host, string) {
	h := newHost(newBin)
	h.svc.binaries[keadmBin] = program{version: ""}
	h.fs.put(h.exe, []byte(keadmBin))
	h.fs.put(h.config, []byte(keadmConfig))
	h.svc.Stop("edgecore")
	h.svc.Start("edgecore")
	self := `C:\Users\admin\Downloads\edgecore.exe`
	h.fs.put(self, []byte(ours))
	return h, self
}

func (h *host) adopt(t *testing.T, self string) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	h.alive[driverPID] = true
	defer delete(h.alive, driverPID)
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db}
	r, err := Adopt(context.Background(), &out, h.env(driverPID, "v0.2.0"),
		Adoption{Installed: in, FromLabel: "keadm", Binary: self, Config: []byte(ourConfig), Timeout: time.Minute})
	if err != nil {
		t.Fatalf("Adopt: %v\n%s", err, out.String())
	}
	return r, out.String()
}

func TestAdoptReplacesBinaryAndConfiguration(t *testing.T) {
	h, self := keadmHost(newBin)
	r, out := h.adopt(t, self)
	if r.Status != StatusSuccess {
		t.Fatalf("result %+v\n%s", r, out)
	}
	h.must(t, h.exe, newBin)
	h.must(t, h.config, ourConfig)
	j := h.journal(t)
	if j.From != "keadm" || j.To != "v0.2.0" || !strings.Contains(j.Backup, `\backup\keadm-2026`) {
		t.Errorf("journal from %q to %q, backup %s", j.From, j.To, j.Backup)
	}
	// The backup holds keadm's binary and configuration: `edgecore.exe
	// rollback` goes back to them later.
	h.must(t, j.Backup+`\edgecore.exe`, keadmBin)
	h.must(t, j.Backup+`\edgecore.yaml`, keadmConfig)
	wantLines(t, out, "and "+h.config+" with its configuration", h.config+" is now the configuration v0.2.0 runs with",
		"the node reported Ready")
}

func TestAdoptRollsBackWhenTheNodeIsNotHealthy(t *testing.T) {
	h, self := keadmHost(badBin)
	h.svc.binaries[badBin] = program{version: "v0.2.0", connects: false}
	r, out := h.adopt(t, self)
	if r.Status != StatusRolledBack {
		t.Fatalf("result %+v\n%s", r, out)
	}
	h.must(t, h.exe, keadmBin)
	h.must(t, h.config, keadmConfig)
	h.must(t, h.db, oldDB)
	if content, _ := h.fs.get(h.exe); h.svc.running.version != "" || content != keadmBin {
		t.Errorf("the service runs %q after the rollback", h.svc.running.version)
	}
	wantLines(t, out, "wrote no health record", "restored "+h.config)
}

func TestAdoptRefusesAConfigurationChangedAfterStaging(t *testing.T) {
	h, self := keadmHost(newBin)
	e := h.env(driverPID, "v0.2.0")
	in := Installed{Service: "edgecore", Executable: h.exe, ConfigFile: h.config, DataSource: h.db}
	j := newJournal(e, KindUpgrade, in, time.Minute)
	j.From, j.To, j.Backup = "keadm", "v0.2.0", e.Paths.Backup("keadm-x")
	j.Staged, j.StagedSHA256 = h.staged, sum(h.stagedContent())
	j.StagedConfig, j.StagedConfigSHA256 = e.Paths.Staging("v0.2.0")+`\edgecore.yaml`, sum(ourConfig)
	h.fs.put(j.StagedConfig, []byte("tampered"))
	_ = self
	r, out := h.run(t, j)
	if r.Status != StatusRolledBack || !strings.Contains(r.Reason, "changed on disk") {
		t.Fatalf("result %+v\n%s", r, out)
	}
	h.must(t, h.config, keadmConfig)
	h.must(t, h.exe, keadmBin)
}
