// Package eventlog writes the edgecore service's life to the Windows
// Application log, where administrators look for a service's history in
// the Event Viewer: one event id per kind of event (Kinds, documented in
// docs/service.md), each message saying what happened and what to do. The
// log file keeps the detail. The decisions (ids, levels, messages' shape)
// are here for every OS; eventlog_windows.go passes them to
// golang.org/x/sys/windows/svc/eventlog and eventlog_others.go keeps the
// package building elsewhere.
package eventlog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Source is the event source `service install` registers and uninstall
// removes: the service's name.
const Source = "edgecore"

// Kind is a kind of event the service writes.
type Kind int

const (
	Start Kind = iota
	Stop
	Restart
	PreShutdown
	Upgrade
	Rollback
	Takeover
	Refused
	DiskSpace
)

// Level is an event's type in the Event Viewer.
type Level int

const (
	Information Level = iota
	Warning
	Error
)

// kinds are the ids (1 to 1000: the message file the source is registered
// with, EventCreate.exe, carries those) and levels.
var kinds = map[Kind]struct {
	id    uint32
	level Level
	name  string
}{
	Start:       {100, Information, "start"},
	Stop:        {101, Information, "stop"},
	Restart:     {102, Warning, "restart after a crash"},
	PreShutdown: {103, Information, "host shutdown"},
	Upgrade:     {104, Information, "upgrade"},
	Rollback:    {105, Warning, "rollback"},
	Takeover:    {106, Information, "takeover"},
	Refused:     {107, Error, "refused to start, or stopped with an error"},
	DiskSpace:   {108, Warning, "a folder of the node full, or space back"},
}

// ID is the kind's event id.
func (k Kind) ID() uint32 { return kinds[k].id }

// Level is the kind's level.
func (k Kind) Level() Level { return kinds[k].level }

func (k Kind) String() string { return kinds[k].name }

// Kinds are every kind, by id.
func Kinds() []Kind {
	return []Kind{Start, Stop, Restart, PreShutdown, Upgrade, Rollback, Takeover, Refused, DiskSpace}
}

// Log is an event log: the Application log under Source on Windows, a
// Recorder in tests.
type Log interface {
	Info(id uint32, msg string) error
	Warning(id uint32, msg string) error
	Error(id uint32, msg string) error
	Close() error
}

// maxMessage bounds a message: the Event Viewer shows the first lines; the
// log file has the rest.
const maxMessage = 2000

// Write writes one event of kind k at its level to l; a nil l writes
// nothing. The message ends with where the detail is.
func Write(l Log, k Kind, msg string) error { return WriteAt(l, k, k.Level(), msg) }

// WriteAt writes one event of kind k at level lv: an upgrade, rollback or
// takeover keeps its id whatever its outcome, and its level says whether
// it went wrong (docs/service.md).
func WriteAt(l Log, k Kind, lv Level, msg string) error {
	if l == nil {
		return nil
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	switch lv {
	case Warning:
		return l.Warning(k.ID(), msg)
	case Error:
		return l.Error(k.ID(), msg)
	}
	return l.Info(k.ID(), msg)
}

// SourceLog is a Log that opens the Application log as its source for each
// event and closes it after: for the commands (upgrade, rollback,
// takeover), which write an event or two and must hold no handle while
// they wait. Outside Windows each write fails with ErrNotSupported.
type SourceLog string

func (s SourceLog) write(f func(Log) error) error {
	l, err := Open(string(s))
	if err != nil {
		return err
	}
	defer l.Close()
	return f(l)
}

func (s SourceLog) Info(id uint32, msg string) error {
	return s.write(func(l Log) error { return l.Info(id, msg) })
}
func (s SourceLog) Warning(id uint32, msg string) error {
	return s.write(func(l Log) error { return l.Warning(id, msg) })
}
func (s SourceLog) Error(id uint32, msg string) error {
	return s.write(func(l Log) error { return l.Error(id, msg) })
}
func (s SourceLog) Close() error { return nil }

// ErrNotSupported is returned outside Windows.
var ErrNotSupported = errors.New("the Windows event log exists only on Windows")

// Event is one event a Recorder holds.
type Event struct {
	ID    uint32
	Level Level
	Msg   string
}

func (e Event) String() string { return fmt.Sprintf("%d %d %s", e.ID, e.Level, e.Msg) }

// Recorder is a Log that keeps what is written, for tests.
type Recorder struct {
	mu     sync.Mutex
	Events []Event
	Closed bool
}

func (r *Recorder) add(l Level, id uint32, msg string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Events = append(r.Events, Event{ID: id, Level: l, Msg: msg})
	return nil
}

func (r *Recorder) Info(id uint32, msg string) error    { return r.add(Information, id, msg) }
func (r *Recorder) Warning(id uint32, msg string) error { return r.add(Warning, id, msg) }
func (r *Recorder) Error(id uint32, msg string) error   { return r.add(Error, id, msg) }
func (r *Recorder) Close() error                        { r.mu.Lock(); r.Closed = true; r.mu.Unlock(); return nil }

// Written is a copy of the events so far.
func (r *Recorder) Written() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.Events...)
}
