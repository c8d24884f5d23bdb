//go:build windows

package eventlog

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/windows/registry"
)

const appKey = `SYSTEM\CurrentControlSet\Services\EventLog\Application\`

// The source's registration, the writes and the removal, with the host's
// event log API. Under Wine the registration is real (the registry key
// and its message file) and ReportEvent accepts every event, but Wine
// keeps no event records (it has no event log service, and ReadEventLog
// returns nothing): that the right id and level reach ReportEvent is
// proved over the Recorder (windows/service's events_test.go).
func TestSourceIsRegisteredWrittenToAndRemoved(t *testing.T) {
	source := fmt.Sprintf("edgecore-test-%d", os.Getpid())
	if err := Install(source); err != nil {
		t.Fatalf("Install: %v (run elevated)", err)
	}
	t.Cleanup(func() { Remove(source) })
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, appKey+source, registry.QUERY_VALUE)
	if err != nil {
		t.Fatalf("the source's key: %v", err)
	}
	file, _, err := k.GetStringValue("EventMessageFile")
	k.Close()
	if err != nil || !strings.Contains(strings.ToLower(file), "eventcreate.exe") {
		t.Errorf("EventMessageFile = %q, %v; want EventCreate.exe, which carries ids 1 to 1000", file, err)
	}
	// A second install (service install after an uninstall that left it)
	// keeps it.
	if err := Install(source); err != nil {
		t.Errorf("a second Install: %v", err)
	}
	l, err := Open(source)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds() {
		if err := Write(l, k, "test event: "+k.String()); err != nil {
			t.Errorf("writing %s: %v", k, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}
	if err := Remove(source); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.OpenKey(registry.LOCAL_MACHINE, appKey+source, registry.QUERY_VALUE); err == nil {
		t.Error("the source's key is still there after Remove")
	}
	if err := Remove(source); err != nil {
		t.Errorf("removing a source that is gone: %v", err)
	}
}
