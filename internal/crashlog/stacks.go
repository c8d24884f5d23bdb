package crashlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

// Stack dumps are named edgecore-stackdump-<pid>-<local time>.log. The
// name does not parse as one of the log file's rotated copies
// (edgecore-<time>.log), so rotation never removes a dump.
const (
	stackDumpPrefix = "edgecore-stackdump-"
	stackDumpExt    = ".log"
	stackDumpTime   = "2006-01-02T15-04-05.000"
)

// StackDumpName is the file name of a dump of process pid taken at t.
func StackDumpName(pid uint32, t time.Time) string {
	return stackDumpPrefix + strconv.FormatUint(uint64(pid), 10) + "-" + t.Format(stackDumpTime) + stackDumpExt
}

// isStackDumpOf reports whether name is a finished dump of process pid.
func isStackDumpOf(name string, pid uint32) bool {
	rest, ok := strings.CutPrefix(name, stackDumpPrefix+strconv.FormatUint(uint64(pid), 10)+"-")
	if !ok {
		return false
	}
	stamp, ok := strings.CutSuffix(rest, stackDumpExt)
	if !ok {
		return false
	}
	_, err := time.ParseInLocation(stackDumpTime, stamp, time.Local)
	return err == nil
}

// Stack dumps are at most this large: a process with so many goroutines
// that their stacks do not fit is reported as such rather than allowed to
// take the host's memory.
const maxStacks = 256 << 20

// AllStacks returns the stacks of every goroutine, as a panic prints them,
// and whether they had to be cut at maxStacks.
func AllStacks() ([]byte, bool) {
	for n := 1 << 20; ; n *= 2 {
		buf := make([]byte, n)
		got := runtime.Stack(buf, true)
		if got < n {
			return buf[:got], false
		}
		if n >= maxStacks {
			return buf, true
		}
	}
}

// WriteStackDump writes every goroutine's stack to a new file in dir and
// returns its path. The file appears under its final name only once it is
// complete, so that whoever waits for it never reads half a dump.
func WriteStackDump(dir string, pid uint32, now time.Time) (string, error) {
	stacks, cut := AllStacks()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("stack dump: cannot create the directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, StackDumpName(pid, now))
	tmp := path + ".tmp"
	header := fmt.Sprintf("goroutine stacks of edgecore process %d at %s\n", pid, now.Format(time.RFC3339Nano))
	if cut {
		header += fmt.Sprintf("(cut at %d bytes: the process has more goroutines than that holds)\n", maxStacks)
	}
	if err := os.WriteFile(tmp, append([]byte(header+"\n"), stacks...), 0o600); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("stack dump: writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("stack dump: renaming %s to %s: %w", tmp, path, err)
	}
	return path, nil
}

// Waiter is a stack dump event: Wait returns nil each time it is
// signalled, and stackdump.ErrClosed once Close has been called.
type Waiter interface {
	Wait() error
	Close() error
}

// ServeStackDumps calls dump each time ev is signalled and reports each
// outcome, until ctx ends; then it closes ev. A Wait that fails for any
// other reason is reported and ends the serving. The returned channel is
// closed once serving has ended and ev is closed.
func ServeStackDumps(ctx context.Context, ev Waiter, dump func() (string, error), report func(path string, err error)) <-chan struct{} {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		if err := ev.Close(); err != nil {
			report("", err)
		}
		close(done)
	}()
	go func() {
		defer close(stopped)
		for {
			err := ev.Wait()
			if errors.Is(err, stackdump.ErrClosed) {
				return
			}
			if err != nil {
				report("", fmt.Errorf("stack dumps on request have stopped: %w", err))
				return
			}
			report(dump())
		}
	}()
	return done
}

// StackDumps lists the finished dumps of process pid in dir.
func StackDumps(dir string, pid uint32) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing stack dumps in %s: %w", dir, err)
	}
	found := map[string]bool{}
	for _, e := range entries {
		if e.Type().IsRegular() && isStackDumpOf(e.Name(), pid) {
			found[e.Name()] = true
		}
	}
	return found, nil
}

// WaitForStackDump waits until a dump of process pid that is not in before
// appears in dir, looking every poll, and returns its path. It gives up
// when ctx ends.
func WaitForStackDump(ctx context.Context, dir string, pid uint32, before map[string]bool, poll time.Duration) (string, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		now, err := StackDumps(dir, pid)
		// The directory may appear only with the first dump.
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		var names []string
		for n := range now {
			if !before[n] {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			// Time-stamped names sort in time order; the newest is ours.
			newest := names[0]
			for _, n := range names[1:] {
				if n > newest {
					newest = n
				}
			}
			return filepath.Join(dir, newest), nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
	}
}
