package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/crashlog"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
	"github.com/kubeedge-windows/edgecore/windows/eventlog"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// recording opens a Recorder as the Application log.
func recording(r *eventlog.Recorder) func(string) (eventlog.Log, error) {
	return func(source string) (eventlog.Log, error) {
		if source != eventlog.Source {
			return nil, errors.New("opened source " + source)
		}
		return r, nil
	}
}

// earlierRun leaves text as the previous run's panic log beside a log file
// and opens this run's as the service does, returning the earlier log's
// note and whether it showed a crash.
func earlierRun(t *testing.T, text string) (note string, crashed bool) {
	t.Helper()
	logFile := filepath.Join(testdir.New(t, "node-events-"), "edgecore.log")
	path := crashlog.PanicLogPath(logFile)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	f, note, crashed, err := openPanicLog(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return note, crashed
}

// A start after a crash writes event 102 first, naming the kept panic log;
// a start after a run that ended with an error (its own event 107 said
// so) writes none.
func TestARestartAfterACrashIsWrittenFirst(t *testing.T) {
	t.Cleanup(func() { service.SetEventLog(nil) })
	r := &eventlog.Recorder{}
	note, crashed := earlierRun(t, "panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\n")
	_, closeIt := openEventLog(recording(r), note, crashed)
	service.WriteEvent(eventlog.Start, eventlog.Information, "started")
	closeIt()
	got := r.Written()
	if len(got) != 2 || got[0].ID != eventlog.Restart.ID() || got[0].Level != eventlog.Warning || got[1].ID != eventlog.Start.ID() {
		t.Fatalf("events %v, want 102 (Warning) then 100", got)
	}
	if !strings.Contains(got[0].Msg, "after a crash") || !strings.Contains(got[0].Msg, crashlog.PanicLogName+crashlog.OldSuffix) {
		t.Errorf("restart event %q does not say it follows a crash and where its panic log is", got[0].Msg)
	}
	if !r.Closed {
		t.Error("the event log is not closed")
	}

	r = &eventlog.Recorder{}
	note, crashed = earlierRun(t, "edgecore.exe: edgecore stopped with an error: config file edgecore.yaml: bad\n")
	_, closeIt = openEventLog(recording(r), note, crashed)
	closeIt()
	if got := r.Written(); len(got) != 0 {
		t.Errorf("a start after a run that ended with an error wrote %v", got)
	}
}

// A service that ends before its lifecycle (its log file cannot be
// opened) writes event 107 with the cause; without an error, nothing.
func TestAServiceThatCannotStartSaysWhy(t *testing.T) {
	t.Cleanup(func() { service.SetEventLog(nil) })
	r := &eventlog.Recorder{}
	_, closeIt := openEventLog(recording(r), "", false)
	refusedToStart(nil)
	refusedToStart(errors.New(`log file C:\var\log\kubeedge\edgecore.log: access is denied`))
	closeIt()
	got := r.Written()
	if len(got) != 1 || got[0].ID != eventlog.Refused.ID() || got[0].Level != eventlog.Error {
		t.Fatalf("events %v, want one 107 (Error)", got)
	}
	for _, want := range []string{"could not start", `edgecore.log: access is denied`, "preflight"} {
		if !strings.Contains(got[0].Msg, want) {
			t.Errorf("refusal event %q lacks %q", got[0].Msg, want)
		}
	}
	// After the close, nothing is written anywhere.
	refusedToStart(errors.New("late"))
	if len(r.Written()) != 1 {
		t.Error("an event was written after the event log was closed")
	}
}
