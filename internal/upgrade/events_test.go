package upgrade

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/eventlog"
)

// wantEvent checks that the host's Application log holds exactly the
// events want, each of its kind's id, at its level, with every phrase.
type wantedEvent struct {
	kind    eventlog.Kind
	level   eventlog.Level
	phrases []string
}

func wantEvents(t *testing.T, h *host, want ...wantedEvent) {
	t.Helper()
	got := h.events.Written()
	if len(got) != len(want) {
		t.Fatalf("events %v, want %d", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.kind.ID() || g.Level != w.level {
			t.Errorf("event %d: id %d level %d, want %d (%s) level %d", i, g.ID, g.Level, w.kind.ID(), w.kind, w.level)
		}
		for _, p := range w.phrases {
			if !strings.Contains(g.Msg, p) {
				t.Errorf("event %d %q lacks %q", i, g.Msg, p)
			}
		}
	}
}

func TestAnUpgradeWritesItsEvent(t *testing.T) {
	h := newHost(newBin)
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusSuccess {
		t.Fatalf("result %+v\n%s", r, out)
	}
	wantEvents(t, h, wantedEvent{eventlog.Upgrade, eventlog.Information, []string{
		"upgrade of edgecore from v0.1.0 to v0.2.0 succeeded", "the service edgecore runs v0.2.0",
		`v0.1.0 is backed up in C:\etc\kubeedge\backup\v0.1.0`, "`edgecore.exe rollback`"}})

	// The rollback command: its own id, a warning.
	var out bytes.Buffer
	r := Rollback(context.Background(), &out, h.env(200, "v0.2.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusSuccess {
		t.Fatalf("rollback %q\n%s", r.Line(), out.String())
	}
	upgraded := wantedEvent{eventlog.Upgrade, eventlog.Information, nil}
	rolledBack := wantedEvent{eventlog.Rollback, eventlog.Warning, []string{
		"rollback of edgecore from v0.2.0 to v0.1.0 succeeded", "runs v0.1.0 again", `restored from C:\etc\kubeedge\backup\v0.1.0`}}
	wantEvents(t, h, upgraded, rolledBack)

	// A refused rollback changed nothing and writes nothing.
	r = Rollback(context.Background(), &out, h.env(201, "v0.1.0"), h.facts(), RollbackOptions{Timeout: time.Minute, Service: "edgecore"})
	if r.Status != StatusRefused {
		t.Fatalf("second rollback %q", r.Line())
	}
	wantEvents(t, h, upgraded, rolledBack)
}

func TestAFailedUpgradeWritesAWarning(t *testing.T) {
	h := newHost(badBin)
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusRolledBack {
		t.Fatalf("result %+v\n%s", r, out)
	}
	wantEvents(t, h, wantedEvent{eventlog.Upgrade, eventlog.Warning, []string{
		"upgrade of edgecore from v0.1.0 to v0.2.0 failed and was rolled back", "did not start",
		"The service edgecore runs v0.1.0 again", `C:\var\log\kubeedge\edgecore.log`}})
}

func TestAnAbandonedUpgradeWritesAWarning(t *testing.T) {
	h := newHost(newBin)
	h.fs.fail = func(op, path string) error {
		if op == "copy" && strings.Contains(path, `\backup\`) {
			return errors.New("There is not enough space on the disk")
		}
		return nil
	}
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusAborted {
		t.Fatalf("result %+v\n%s", r, out)
	}
	wantEvents(t, h, wantedEvent{eventlog.Upgrade, eventlog.Warning, []string{
		"was abandoned before anything was replaced", "There is not enough space on the disk", "runs v0.1.0"}})
}

func TestAFailedRollbackWritesAnError(t *testing.T) {
	h := newHost(badBin)
	h.fs.fail = func(op, path string) error {
		if op == "copy" && strings.HasSuffix(path, "edgecore.yaml") && !strings.Contains(path, `\backup\`) {
			return errors.New("Access is denied")
		}
		return nil
	}
	if r, out := h.run(t, h.plannedUpgrade(h.env(driverPID, "v0.1.0"))); r.Status != StatusFailed {
		t.Fatalf("result %+v\n%s", r, out)
	}
	wantEvents(t, h, wantedEvent{eventlog.Upgrade, eventlog.Error, []string{
		"failed, and so did its rollback", "Access is denied", `the backup is in C:\etc\kubeedge\backup\v0.1.0`, "Which version runs is not known"}})
}

// A journal whose driver died is finished by the next process: one event,
// written by that process.
func TestAResumedUpgradeWritesOneEvent(t *testing.T) {
	h := newHost(newBin)
	e := h.env(driverPID, "v0.1.0")
	j := h.plannedUpgrade(e)
	j.Phase = PhasePlanned
	if err := saveJournal(e, j); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, ok, err := Resume(context.Background(), &out, h.env(300, "v0.1.0"), "")
	if err != nil || !ok || r.Status != StatusAborted {
		t.Fatalf("resume: %+v %v %v\n%s", r, ok, err, out.String())
	}
	wantEvents(t, h, wantedEvent{eventlog.Upgrade, eventlog.Warning, []string{"abandoned", "interrupted in phase planned"}})
}

func TestATakeoverWritesItsOwnEvent(t *testing.T) {
	h, self := keadmHost(newBin)
	if r, out := h.adopt(t, self); r.Status != StatusSuccess {
		t.Fatalf("result %+v\n%s", r, out)
	}
	wantEvents(t, h, wantedEvent{eventlog.Takeover, eventlog.Information, []string{
		"takeover of the service edgecore from keadm's installation by edgecore v0.2.0 succeeded",
		`keadm's binary, configuration and database are kept in C:\etc\kubeedge\backup\keadm-2026`, "`edgecore.exe rollback`"}})

	h, self = keadmHost(badBin)
	h.svc.binaries[badBin] = program{version: "v0.2.0", connects: false}
	if r, out := h.adopt(t, self); r.Status != StatusRolledBack {
		t.Fatalf("result %+v\n%s", r, out)
	}
	wantEvents(t, h, wantedEvent{eventlog.Takeover, eventlog.Warning, []string{
		"failed and was undone", "wrote no health record", "runs keadm's installation again"}})
}
