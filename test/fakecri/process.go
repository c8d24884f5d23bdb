package fakecri

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The commands a container of the fake runs, as its own command, through
// exec and through ExecSync. There is no process behind them: each is a few
// lines of Go, so that a test knows exactly what a command prints and
// returns, on Linux and under Wine alike.
const (
	// CmdEcho prints its arguments joined by spaces, and a newline.
	CmdEcho = "echo"
	// CmdExit returns its argument as the exit code.
	CmdExit = "exit"
	// CmdCat copies standard input to standard output until it ends.
	CmdCat = "cat"
	// CmdLog prints its arguments to the container's own output, that is,
	// to its log, as if the container's main process had printed them:
	// what a test appends while `kubectl logs --follow` reads.
	CmdLog = "log"
	// CmdStop ends the container's main process with its argument as the
	// exit code, as a crash would; the kubelet then restarts the
	// container and `kubectl logs --previous` reads the ended one.
	CmdStop = "stop"
	// CmdOnStop sets the exit code the container's main process ends
	// with when the runtime stops it: 0 (the default) for a process that
	// exits cleanly on its stop signal, another for one the signal ends,
	// as most do; and, with a second argument (a Go duration such as
	// "5s"), how long the process takes to exit after the signal, as one
	// that finishes its work first does. A stop whose grace period ends
	// sooner kills it (ExitKilled).
	CmdOnStop = "onstop"
)

// ExitCommandNotFound is the exit code of a command outside the set, as a
// shell reports one it cannot find.
const ExitCommandNotFound = 127

// Commands lists the command set, for messages.
var Commands = []string{CmdEcho, CmdExit, CmdCat, CmdLog, CmdStop, CmdOnStop}

// logWriter writes one stream of a container in the CRI log format the
// kubelet reads for `kubectl logs`: each line as
// "<RFC3339Nano time> <stream> <F|P> <text>\n", F for a full line and P for
// a part of one (what a write leaves without a newline). The file is opened
// for each write, so that a rotation by the kubelet is followed at once.
type logWriter struct {
	mu     *sync.Mutex // one per container: both streams share the file
	path   string
	stream string // "stdout" or "stderr"
}

func (w logWriter) Write(p []byte) (int, error) {
	if w.path == "" {
		return len(p), nil
	}
	var b bytes.Buffer
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for rest := p; len(rest) > 0; {
		line, after, full := bytes.Cut(rest, []byte("\n"))
		tag := "F"
		if !full {
			tag = "P"
		}
		fmt.Fprintf(&b, "%s %s %s %s\n", now, w.stream, tag, line)
		rest = after
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// logs are the container's standard output and error, written to its log.
func (c *container) logs() (stdout, stderr io.Writer) {
	return logWriter{mu: &c.logMu, path: c.status.LogPath, stream: "stdout"},
		logWriter{mu: &c.logMu, path: c.status.LogPath, stream: "stderr"}
}

// run runs cmd of the command set in container id with the given streams
// and returns its exit code; in may be nil (no standard input). A
// container that is gone or not running cannot run anything, as with a real
// runtime.
func (s *service) run(id string, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	s.mu.Lock()
	c, ok := s.containers[id]
	running := ok && c.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	s.mu.Unlock()
	if !ok {
		return 0, notFound("container", id)
	}
	if !running {
		return 0, status.Errorf(codes.FailedPrecondition, "container %q is not running", id)
	}
	if len(cmd) == 0 {
		return 0, status.Errorf(codes.InvalidArgument, "no command given: the fake runs %s", strings.Join(Commands, ", "))
	}
	return s.command(c, cmd, in, out, errOut), nil
}

// command runs one command of the set for c; the caller has checked that c
// runs. Wrong arguments are the command's own failure (exit code 2, the
// reason on standard error), as a program reports them.
func (s *service) command(c *container, cmd []string, in io.Reader, out, errOut io.Writer) int {
	name, args := cmd[0], cmd[1:]
	code := func() (int, bool) {
		if len(args) != 1 {
			fmt.Fprintf(errOut, "%s: want one exit code, got %q\n", name, args)
			return 2, false
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 || n > 255 {
			fmt.Fprintf(errOut, "%s: %q is not an exit code (0-255)\n", name, args[0])
			return 2, false
		}
		return n, true
	}
	switch name {
	case CmdEcho:
		fmt.Fprintln(out, strings.Join(args, " "))
		return 0
	case CmdExit:
		n, _ := code()
		return n
	case CmdCat:
		if in == nil {
			return 0
		}
		if _, err := io.Copy(out, in); err != nil {
			fmt.Fprintf(errOut, "cat: %v\n", err)
			return 1
		}
		return 0
	case CmdLog:
		logOut, _ := c.logs()
		if _, err := fmt.Fprintln(logOut, strings.Join(args, " ")); err != nil {
			fmt.Fprintf(errOut, "log: %v\n", err)
			return 1
		}
		return 0
	case CmdStop:
		n, ok := code()
		if !ok {
			return n
		}
		s.mu.Lock()
		exit(c, int32(n))
		s.mu.Unlock()
		return 0
	case CmdOnStop:
		var takes time.Duration
		if len(args) == 2 {
			d, err := time.ParseDuration(args[1])
			if err != nil || d < 0 {
				fmt.Fprintf(errOut, "%s: %q is not how long the process takes to stop (a duration such as 5s)\n", name, args[1])
				return 2
			}
			takes, args = d, args[:1]
		}
		n, ok := code()
		if !ok {
			return n
		}
		s.mu.Lock()
		c.stopCode, c.stopTakes = int32(n), takes
		s.mu.Unlock()
		return 0
	default:
		fmt.Fprintf(errOut, "%s: command not found (the fake runs %s)\n", name, strings.Join(Commands, ", "))
		return ExitCommandNotFound
	}
}

// exit ends a running container's main process with code. The caller holds
// s.mu.
func exit(c *container, code int32) {
	if c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	finish(c, code, reason)
}

// finish records the end of a created or running container and ends its
// attach streams. The caller holds s.mu.
func finish(c *container, code int32, reason string) {
	if c.status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		return
	}
	c.status.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.status.FinishedAt = time.Now().UnixNano()
	c.status.ExitCode = code
	c.status.Reason = reason
	close(c.done)
}
