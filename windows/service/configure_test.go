package service

import (
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// recordingConfigurer records the calls setCommandLine makes, in order.
type recordingConfigurer struct {
	calls            []string
	setErr, flushErr error
}

func (r *recordingConfigurer) setImagePath(line string) error {
	r.calls = append(r.calls, "ChangeServiceConfig "+line)
	return r.setErr
}

func (r *recordingConfigurer) flush() error {
	r.calls = append(r.calls, "RegFlushKey")
	return r.flushErr
}

// The command line is flushed to disk after it is changed and before
// setCommandLine returns: the upgrade's next step (the journal's next
// phase, a rename) must not reach the disk before it.
func TestSetCommandLineFlushesTheServiceKey(t *testing.T) {
	line := `"C:\etc\kubeedge\backup\v0.1.0\edgecore.exe" --config "C:\etc\kubeedge\config\edgecore.yaml"`
	r := &recordingConfigurer{}
	if err := setCommandLine("edgecore", line, r); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ChangeServiceConfig " + line, "RegFlushKey"}; !reflect.DeepEqual(r.calls, want) {
		t.Errorf("calls %q, want %q", r.calls, want)
	}

	// A refused change is not flushed, and is explained.
	r = &recordingConfigurer{setErr: syscall.Errno(errnoAccessDenied)}
	err := setCommandLine("edgecore", line, r)
	if !errors.Is(err, ErrAccessDenied) || len(r.calls) != 1 {
		t.Errorf("a refused change: %v after %q", err, r.calls)
	}

	// A failed flush fails the call: the caller must not go on as if
	// the command line were on disk.
	r = &recordingConfigurer{flushErr: syscall.Errno(1016)}
	err = setCommandLine("edgecore", line, r)
	if err == nil || !strings.Contains(err.Error(), `flush HKLM\SYSTEM\CurrentControlSet\Services\edgecore`) ||
		!strings.Contains(err.Error(), "run the command again") || !errors.Is(err, syscall.Errno(1016)) {
		t.Errorf("a failed flush = %v", err)
	}
}
