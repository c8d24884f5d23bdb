package crashlog

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPanicLogIsBesideTheLogFile(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "kubeedge", "edgecore.log")
	if got, want := PanicLogPath(logFile), filepath.Join(filepath.Dir(logFile), "panic.log"); got != want {
		t.Errorf("PanicLogPath = %s, want %s", got, want)
	}
}

func TestOpenPanicLogCreatesTheDirectoryAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log", "kubeedge", PanicLogName)
	f, note, err := OpenPanicLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if note != "" {
		t.Errorf("note %q with no earlier panic log", note)
	}
	if _, err := f.WriteString("panic: boom\n"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "panic: boom\n" {
		t.Errorf("panic log holds %q", got)
	}
}

func TestOpenPanicLogKeepsANonEmptyOneAsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, PanicLogName)
	if err := os.WriteFile(path+OldSuffix, []byte("the crash before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("panic: the last crash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, note, err := OpenPanicLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := read(t, path+OldSuffix); got != "panic: the last crash\n" {
		t.Errorf("panic.log.old holds %q, want the last crash (replacing the older one)", got)
	}
	if got := read(t, path); got != "" {
		t.Errorf("the new panic log holds %q, want it empty", got)
	}
	if !strings.Contains(note, path+OldSuffix) || !strings.Contains(note, "22 bytes") {
		t.Errorf("note %q does not say where the earlier log went and its size", note)
	}
}

func TestOpenPanicLogReusesAnEmptyOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, PanicLogName)
	if err := os.WriteFile(path+OldSuffix, []byte("an old crash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, note, err := OpenPanicLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if note != "" {
		t.Errorf("note %q for an empty earlier panic log", note)
	}
	if got := read(t, path+OldSuffix); got != "an old crash\n" {
		t.Errorf("an empty panic log replaced panic.log.old: it holds %q", got)
	}
}

func TestOpenPanicLogAppendsWhenTheOldOneCannotBeReplaced(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a directory in the way of a rename is a Unix case")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, PanicLogName)
	// A non-empty directory named panic.log.old cannot be replaced by a
	// rename.
	if err := os.MkdirAll(filepath.Join(path+OldSuffix, "x"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("panic: the last crash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, note, err := OpenPanicLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("panic: this run\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := read(t, path)
	if !strings.HasPrefix(got, "panic: the last crash\n") || !strings.HasSuffix(got, "panic: this run\n") ||
		!strings.Contains(got, "the lines above are from an earlier run") {
		t.Errorf("panic log holds %q, want the earlier crash, a separator and this run", got)
	}
	if !strings.Contains(note, "could not be moved") {
		t.Errorf("note %q does not say the earlier log stayed", note)
	}
}

func TestPanicLogsListsOnlyNonEmptyOnesNewestFirst(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "edgecore.log")
	found, err := PanicLogs(logFile)
	if err != nil || len(found) != 0 {
		t.Fatalf("no panic logs: %v, %v", found, err)
	}
	path := PanicLogPath(logFile)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if found, _ := PanicLogs(logFile); len(found) != 0 {
		t.Errorf("an empty panic log is listed: %v", found)
	}
	if err := os.WriteFile(path+OldSuffix, []byte("panic: old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("panic: new one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path+OldSuffix, old, old); err != nil {
		t.Fatal(err)
	}
	found, err = PanicLogs(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[0].Path != path || found[0].Size != 15 || found[1].Path != path+OldSuffix {
		t.Fatalf("PanicLogs = %v, want panic.log (15 bytes) then panic.log.old", found)
	}
	if s := found[1].String(); !strings.Contains(s, path+OldSuffix) || !strings.Contains(s, "11 bytes") ||
		!strings.Contains(s, old.Format("2006-01-02 15:04")) {
		t.Errorf("File.String() = %q, want path, size and time", s)
	}
}

// A crash's report in the panic log tells a restart after a crash from one
// after a run that ended with an error line (event 107 said that already).
func TestShowsCrashTellsACrashFromAnErrorLine(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		text  string
		crash bool
	}{
		"panic":          {"panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\nmain.main()\n", true},
		"module's panic": {"panic: failed to apply the edge certs\n\nmodule websocket panicked in Start:\ngoroutine 94 [running]:\n", true},
		"fatal error":    {"fatal error: concurrent map writes\n\ngoroutine 7 [running]:\n", true},
		"exception":      {"Exception 0xc0000005 0x0 0x0 0x7ffb12345678\nPC=0x7ffb12345678\n", true},
		"after a line":   {"W1128 something the runtime said first\npanic: boom\n", true},
		"refusal":        {"edgecore.exe: edgecore stopped with an error: config file C:\\etc\\kubeedge\\config\\edgecore.yaml: modules.edged: bad\n", false},
		"empty":          {"", false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".log")
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ShowsCrash(path); got != tc.crash {
			t.Errorf("%s: ShowsCrash = %v, want %v", name, got, tc.crash)
		}
	}
	if ShowsCrash(filepath.Join(dir, "missing.log")) {
		t.Error("a missing panic log shows a crash")
	}
}
