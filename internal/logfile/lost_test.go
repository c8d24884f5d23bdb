package logfile

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// volume is a log file on a volume that fills up: while full it takes
// room bytes of a write (0 or part of a line), then refuses the rest with
// ENOSPC, as a full disk does.
type volume struct {
	data   strings.Builder
	full   bool
	room   int
	closed bool
}

func (v *volume) Write(p []byte) (int, error) {
	if v.full {
		n := min(v.room, len(p))
		v.data.Write(p[:n])
		v.room -= n
		return n, &fsError{syscall.ENOSPC}
	}
	return v.data.Write(p)
}

func (v *volume) Close() error { v.closed = true; return nil }

// fsError is what the os package returns: the path and the errno.
type fsError struct{ errno syscall.Errno }

func (e *fsError) Error() string { return `write C:\var\log\kubeedge\edgecore.log: ` + e.errno.Error() }
func (e *fsError) Unwrap() error { return e.errno }

// Lines refused by a full volume are not lost without a trace: the first
// line written once there is room again is preceded by one that counts
// them, says from when to when and gives the error; a line cut in the
// middle by the full volume does not swallow the note.
func TestLinesRefusedByAFullVolumeAreCountedInTheLog(t *testing.T) {
	v := &volume{}
	clock := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	k := newKeeper(v, func() time.Time { return clock })
	if _, err := k.Write([]byte("I1 before\n")); err != nil {
		t.Fatal(err)
	}
	v.full, v.room = true, 3
	for i, line := range []string{"E2 cut short\n", "E3 lost\n", "E4 lost\n"} {
		clock = clock.Add(time.Second)
		if _, err := k.Write([]byte(line)); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("write %d on a full volume: %v", i, err)
		}
	}
	v.full = false
	clock = clock.Add(time.Minute)
	if n, err := k.Write([]byte("I5 after\n")); err != nil || n != len("I5 after\n") {
		t.Fatalf("write with room: %d, %v", n, err)
	}
	k.Write([]byte("I6 next\n"))
	want := "I1 before\nE2 \n" +
		"edgecore: 3 log lines could not be written to this file from 2026-11-28 01:00:01.000000 to 2026-11-28 01:00:03.000000: " +
		`write C:\var\log\kubeedge\edgecore.log: ` + syscall.ENOSPC.Error() + "\nI5 after\nI6 next\n"
	if got := v.data.String(); got != want {
		t.Errorf("the file holds\n%s\nwant\n%s", got, want)
	}
	if err := k.Close(); err != nil || !v.closed {
		t.Errorf("close: %v, closed %v", err, v.closed)
	}
}

// The volume still full when the note is due: the note is not written in
// part, the count goes on, and it comes with the next line that fits.
func TestTheNoteWaitsForRoom(t *testing.T) {
	v := &volume{full: true}
	clock := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	k := newKeeper(v, func() time.Time { return clock })
	k.Write([]byte("E1\n"))
	clock = clock.Add(time.Second)
	k.Write([]byte("E2\n"))
	v.full = false
	k.Write([]byte("I3\n"))
	if got := v.data.String(); !strings.HasPrefix(got, "edgecore: 2 log lines could not be written") || !strings.HasSuffix(got, "\nI3\n") || strings.Count(got, "edgecore:") != 1 {
		t.Errorf("the file holds %q", got)
	}
}
