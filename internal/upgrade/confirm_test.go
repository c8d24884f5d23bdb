package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"
)

func waitingJob(h *host) Waiting {
	return Waiting{Job: "to-v0.2.0", Node: "win-1", Version: "v0.2.0", Spec: json.RawMessage(`{"version":"v0.2.0","requireConfirmation":true}`), Since: h.clock.Now()}
}

// The operator's confirmation reaches the node once, and only for the job
// that waits.
func TestConfirmationIsTakenOnceForTheWaitingJob(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	if _, err := Confirm(e, ""); err == nil || !strings.Contains(err.Error(), "no NodeUpgradeJob waits") {
		t.Fatalf("confirm with nothing waiting: %v", err)
	}
	if err := Wait(e, waitingJob(h)); err != nil {
		t.Fatal(err)
	}
	if w, err := TakeConfirmation(e); w != nil || err != nil {
		t.Fatalf("taken before it was confirmed: %+v %v", w, err)
	}
	if _, err := Confirm(e, "to-v9"); err == nil || !strings.Contains(err.Error(), `--job: Invalid value: "to-v9"`) || !strings.Contains(err.Error(), "give --job to-v0.2.0") {
		t.Fatalf("confirm of another job: %v", err)
	}
	w, err := Confirm(e, "to-v0.2.0")
	if err != nil || w.Version != "v0.2.0" {
		t.Fatalf("confirm: %+v %v", w, err)
	}
	got, err := TakeConfirmation(e)
	if err != nil || got == nil || got.Job != "to-v0.2.0" || string(got.Spec) != string(waitingJob(h).Spec) {
		t.Fatalf("taken: %+v %v", got, err)
	}
	if again, err := TakeConfirmation(e); again != nil || err != nil {
		t.Fatalf("taken twice: %+v %v", again, err)
	}
	for _, p := range []string{e.Paths.Waiting, e.Paths.Confirmed} {
		if _, ok := h.fs.get(p); ok {
			t.Errorf("%s left behind", p)
		}
	}
}

// A confirmation left for an earlier job does not start a new one.
func TestNewJobDropsAnEarlierConfirmation(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	first := waitingJob(h)
	if err := Wait(e, first); err != nil {
		t.Fatal(err)
	}
	if _, err := Confirm(e, ""); err != nil {
		t.Fatal(err)
	}
	second := first
	second.Job, second.Version = "to-v0.3.0", "v0.3.0"
	if err := Wait(e, second); err != nil {
		t.Fatal(err)
	}
	if w, err := TakeConfirmation(e); w != nil || err != nil {
		t.Fatalf("the new job was taken on the old confirmation: %+v %v", w, err)
	}
}

// A confirmation binds the job's name, version and spec: the cloud that
// sends a job of the same name again, with another version or spec, while
// the operator confirms (Wait removes the confirmation only when it comes
// first) does not get the new one confirmed.
func TestAConfirmationIsBoundToTheJobsVersionAndSpec(t *testing.T) {
	for name, change := range map[string]func(w *Waiting){
		"another version": func(w *Waiting) { w.Version = "v0.3.0" },
		"another spec": func(w *Waiting) {
			w.Spec = json.RawMessage(`{"version":"v0.2.0","requireConfirmation":true,"image":"elsewhere"}`)
		},
	} {
		h := newHost(newBin)
		e := h.env(4000, "v0.1.0")
		first := waitingJob(h)
		if err := Wait(e, first); err != nil {
			t.Fatal(err)
		}
		if _, err := Confirm(e, first.Job); err != nil {
			t.Fatal(err)
		}
		confirmed, _ := h.fs.get(e.Paths.Confirmed)
		for _, w := range []string{`"job":"to-v0.2.0"`, `"version":"v0.2.0"`, `"specDigest":"` + first.SpecDigest() + `"`} {
			if !strings.Contains(confirmed, w) {
				t.Errorf("%s: the confirmation %s lacks %s", name, confirmed, w)
			}
		}
		// The cloud's new job arrives after the confirmation was
		// written, as if Wait had lost the race to remove it.
		second := first
		change(&second)
		data, _ := json.Marshal(second)
		h.fs.put(e.Paths.Waiting, data)
		if w, err := TakeConfirmation(e); w != nil || err != nil {
			t.Errorf("%s: taken on the confirmation of the first: %+v %v", name, w, err)
		}
		h.fs.put(e.Paths.Waiting, mustJSON(t, first))
		if w, err := TakeConfirmation(e); w == nil || err != nil {
			t.Errorf("%s: the confirmed job itself was not taken: %v", name, err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestWaitingFileThatIsNotAJob(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	h.fs.put(e.Paths.Waiting, []byte("{"))
	if _, err := LoadWaiting(e); err == nil || !strings.Contains(err.Error(), e.Paths.Waiting) || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("a broken waiting file: %v", err)
	}
}

// The node follows the wait: it hands the job on once confirmed, and
// stops following when no job waits any more or the node stops.
func TestAwaitConfirmation(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	if err := Wait(e, waitingJob(h)); err != nil {
		t.Fatal(err)
	}
	polls := 0
	h.clock.onTick = append(h.clock.onTick, func() {
		polls++
		if polls == 3 {
			if _, err := Confirm(e, ""); err != nil {
				t.Error(err)
			}
		}
	})
	var got []string
	AwaitConfirmation(context.Background(), e, func(w Waiting) { got = append(got, w.Job) }, t.Logf)
	if len(got) != 1 || got[0] != "to-v0.2.0" || polls != 3 {
		t.Fatalf("handed on %v after %d polls, want to-v0.2.0 once after the confirmation", got, polls)
	}
	// Nothing waits: it returns at once.
	AwaitConfirmation(context.Background(), e, func(w Waiting) { t.Fatalf("handed on %+v", w) }, t.Logf)
	// The node stops while the job waits.
	if err := Wait(e, waitingJob(h)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	AwaitConfirmation(ctx, e, func(w Waiting) { t.Fatalf("handed on %+v", w) }, t.Logf)
	if w, _ := LoadWaiting(e); w == nil {
		t.Fatal("the wait did not survive the node's stop")
	}
}

// The command says when edgecore took the confirmation, and says what to
// check when it does not within --timeout; the confirmation then stays.
func TestConfirmAndWait(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	if err := Wait(e, waitingJob(h)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := ConfirmAndWait(context.Background(), &out, e, ConfirmOptions{Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "Get-Service edgecore") || !strings.Contains(err.Error(), e.Paths.Confirmed) {
		t.Fatalf("no edgecore to take it: %v", err)
	}
	// The node takes it on its next poll.
	h.clock.onTick = append(h.clock.onTick, func() { TakeConfirmation(e) })
	out.Reset()
	if err := ConfirmAndWait(context.Background(), &out, e, ConfirmOptions{Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "NodeUpgradeJob to-v0.2.0 (to v0.2.0, spec "+waitingJob(h).SpecDigest()+", waiting since 2026-03-01T10:00:00Z) confirmed.") ||
		!strings.Contains(out.String(), "edgecore took the confirmation") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestConfirmOptionsValidate(t *testing.T) {
	if err := NewConfirmOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	err := ConfirmOptions{Job: "To_V2", Timeout: 0}.Validate()
	if err == nil || !strings.Contains(err.Error(), `--timeout: Invalid value: "0s"`) || !strings.Contains(err.Error(), `--job: Invalid value: "To_V2"`) {
		t.Fatalf("bad options: %v", err)
	}
}

// An operator who did not elevate is told to.
func TestConfirmNotElevated(t *testing.T) {
	h := newHost(newBin)
	e := h.env(4000, "v0.1.0")
	if err := Wait(e, waitingJob(h)); err != nil {
		t.Fatal(err)
	}
	h.fs.fail = func(op, p string) error {
		if p == e.Paths.Confirmed {
			return &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
		}
		return nil
	}
	if _, err := Confirm(e, ""); err == nil || !strings.Contains(err.Error(), `Run as administrator`) {
		t.Fatalf("confirm without the right to write: %v", err)
	}
}
