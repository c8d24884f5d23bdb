package logfile

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// keeper writes log lines to the file and keeps count of those the file
// refused (a full volume: klog drops a failed write without a word). The
// first line written after such a spell is preceded by one that says how
// many lines were lost, over what time and why, so that a gap in the log
// reads as one.
type keeper struct {
	mu  sync.Mutex
	w   io.WriteCloser
	now func() time.Time

	lost        int
	first, last time.Time
	err         error
	// partial is set when a refused write left part of its line in the
	// file: the note then starts on a line of its own.
	partial bool
}

func newKeeper(w io.WriteCloser, now func() time.Time) *keeper { return &keeper{w: w, now: now} }

func (k *keeper) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lost > 0 {
		note := k.note()
		if n, err := k.w.Write([]byte(note)); err != nil {
			k.refused(n, err)
			return 0, err
		}
		k.lost, k.err, k.partial = 0, nil, false
	}
	n, err := k.w.Write(p)
	if err != nil {
		k.refused(n, err)
	}
	return n, err
}

// refused counts a write the file refused after n bytes.
func (k *keeper) refused(n int, err error) {
	now := k.now()
	if k.lost == 0 {
		k.first = now
	}
	k.lost++
	k.last, k.err = now, err
	k.partial = k.partial || n > 0
}

// note is the line that stands for the lines lost.
func (k *keeper) note() string {
	lead := ""
	if k.partial {
		lead = "\n"
	}
	const stamp = "2006-01-02 15:04:05.000000"
	return fmt.Sprintf("%sedgecore: %d log lines could not be written to this file from %s to %s: %v\n",
		lead, k.lost, k.first.Format(stamp), k.last.Format(stamp), k.err)
}

func (k *keeper) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.w.Close()
}
