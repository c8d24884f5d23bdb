package reconnect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// StatusFile is where a node that writes a log file records its
// connection to cloudcore, beside that log: `edgecore.exe service
// status` reads it, so that a service that runs but is not connected says
// why without anyone reading the log.
const StatusFile = "hub-status.json"

// StatusPath is the status file of the node whose log file is logFile on
// goos.
func StatusPath(goos, logFile string) string {
	return ospath.Join(goos, ospath.Dir(goos, logFile), StatusFile)
}

// Status is what the node records of its connection to cloudcore.
type Status struct {
	// PID is the node's process: a status another process wrote is
	// stale.
	PID       int       `json:"pid"`
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
	// Waiting says why the node is not connected yet, when it knows.
	Waiting string `json:"waiting,omitempty"`
	// Pods says why the node cannot list its pods from the cloud ("" when
	// it can, or has not tried): it then misses what cloudcore's lost
	// messages left out.
	Pods string `json:"pods,omitempty"`
}

// Encode is the file's content.
func (s Status) Encode() []byte {
	data, _ := json.Marshal(s)
	return data
}

// ReadStatus reads the status file at path; ok is false when there is
// none.
func ReadStatus(read func(string) ([]byte, error), path string) (s Status, ok bool, err error) {
	data, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Status{}, false, nil
	}
	if err != nil {
		return Status{}, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return Status{}, false, fmt.Errorf("%s: %v", path, err)
	}
	return s, true, nil
}

// Describe is the status as `service status` prints it for the running
// process pid, at now; "" when the status is another process's.
func (s Status) Describe(pid uint32, now time.Time) string {
	if pid == 0 || s.PID != int(pid) {
		return ""
	}
	since := fmt.Sprintf("since %s (%s ago)", s.Since.UTC().Format(time.RFC3339), now.Sub(s.Since).Round(time.Second))
	var d string
	switch {
	case s.Connected:
		d = "connected to cloudcore " + since
	case s.Waiting != "":
		d = "not connected to cloudcore " + since + ": " + s.Waiting
	default:
		d = "not connected to cloudcore " + since
	}
	if s.Pods != "" {
		d += "; the node cannot list its pods from the cloud: " + s.Pods
	}
	return d
}
