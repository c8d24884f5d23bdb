// Package crashlog keeps, beside edgecore's log file, what an operator needs
// after a crash or a hang: panic.log, where the service's standard error
// goes (the Go runtime writes a panic's stacks there, not to the log), and
// goroutine stack dumps written on request.
package crashlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// PanicLogName is the file beside the log file that receives the service's
// standard error.
const PanicLogName = "panic.log"

// OldSuffix marks the panic log of the run before the last one that wrote
// anything: panic.log.old.
const OldSuffix = ".old"

// PanicLogPath is the panic log that belongs to the log file logFile.
func PanicLogPath(logFile string) string {
	return PanicLogPathFor(runtime.GOOS, logFile)
}

// PanicLogPathFor is PanicLogPath for a host running goos, so that join's
// tests on Linux name the file a Windows node writes.
func PanicLogPathFor(goos, logFile string) string {
	return ospath.Join(goos, ospath.Dir(goos, logFile), PanicLogName)
}

// OpenPanicLog opens the panic log at path for this run, creating its
// directory if needed. A panic log an earlier run wrote to is kept as
// path.old, replacing an older one, so that a crash survives the restart
// that follows it; an empty one is reused. If the earlier log cannot be
// moved aside, this run appends to it rather than lose it. note says what
// happened to the earlier log, for the log file; empty when there was
// nothing to keep.
func OpenPanicLog(path string) (f *os.File, note string, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, "", fmt.Errorf("panic log %s: cannot create the directory: %w", path, err)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, "", fmt.Errorf("panic log %s: %w", path, err)
	case !info.Mode().IsRegular():
		return nil, "", fmt.Errorf("panic log %s is not a regular file; remove it", path)
	case info.Size() > 0:
		old := path + OldSuffix
		if rerr := os.Rename(path, old); rerr != nil {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return nil, "", fmt.Errorf("panic log %s: cannot keep the earlier one as %s (%v) nor append to it: %w", path, old, rerr, err)
			}
			fmt.Fprintf(f, "\n--- edgecore started at %s; the lines above are from an earlier run ---\n", time.Now().Format(time.RFC3339))
			return f, fmt.Sprintf("the earlier panic log could not be moved to %s (%v); this run appends to %s", old, rerr, path), nil
		}
		note = fmt.Sprintf("kept the earlier panic log (%d bytes, written %s) as %s", info.Size(), info.ModTime().Format(time.RFC3339), old)
	}
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("panic log %s: cannot open it for writing: %w", path, err)
	}
	return f, note, nil
}

// File is a non-empty file an operator should look at.
type File struct {
	Path    string
	Size    int64
	ModTime time.Time
}

func (f File) String() string {
	return fmt.Sprintf("%s (%d bytes, written %s)", f.Path, f.Size, f.ModTime.Format("2006-01-02 15:04:05 MST"))
}

// PanicLogs returns the non-empty panic logs that belong to logFile, the
// current one and the kept one, newest first. A missing or empty file is
// not listed: it shows nothing went wrong.
func PanicLogs(logFile string) ([]File, error) {
	cur := PanicLogPath(logFile)
	var found []File
	for _, p := range []string{cur, cur + OldSuffix} {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("panic log %s: %w", p, err)
		}
		if info.Size() > 0 {
			found = append(found, File{Path: p, Size: info.Size(), ModTime: info.ModTime()})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].ModTime.After(found[j].ModTime) })
	return found, nil
}

// crashStart are the lines the Go runtime starts a crash's report with in
// standard error: a panic (modulePanicked writes one too), a fatal error
// (out of memory, a concurrent map write, a deadlock) and a Windows
// exception it could not turn into a panic.
var crashStart = []string{"panic: ", "fatal error: ", "Exception 0x"}

// maxCrashScan bounds how much of a panic log ShowsCrash reads: a crash's
// first line comes before its goroutines' stacks.
const maxCrashScan = 1 << 20

// ShowsCrash reports whether the panic log at path holds a crash's report,
// as opposed to nothing, or only the error line a run that refused to go
// on printed as it ended (which the service wrote as its own event, 107).
// A file that cannot be read shows none.
func ShowsCrash(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(io.LimitReader(f, maxCrashScan))
	s.Buffer(make([]byte, 64*1024), maxCrashScan)
	for s.Scan() {
		line := s.Text()
		for _, p := range crashStart {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
	}
	return false
}
