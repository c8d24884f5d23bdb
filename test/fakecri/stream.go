package fakecri

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubelet/pkg/cri/streaming"
	utilexec "k8s.io/utils/exec"
)

// streamer runs exec and attach for the kubelet's CRI streaming server:
// the kubelet asks Exec or Attach for a URL, then proxies the API server's
// stream to it, as it does with containerd.
type streamer struct{ s *service }

// Exec runs cmd of the command set. A non-zero exit code is returned as an
// exit error, which the streaming server reports to the client as the
// command's exit code rather than as a failure of the call.
func (r streamer) Exec(_ context.Context, id string, cmd []string, in io.Reader, out, errOut io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize) error {
	code, err := r.s.run(id, cmd, in, writerOrDiscard(out), writerOrDiscard(errOut))
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("%s exited with %d", cmd[0], code), Code: code}
	}
	return nil
}

// Attach connects to the container's main process, which echoes its
// standard input to its standard output, until the input ends, the client
// goes away or the container stops.
func (r streamer) Attach(ctx context.Context, id string, in io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize) error {
	done, err := r.s.exited(id)
	if err != nil {
		return err
	}
	if in == nil || out == nil {
		select {
		case <-ctx.Done():
		case <-done:
		}
		return nil
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, in)
		copied <- err
	}()
	select {
	case err := <-copied:
		return err
	case <-ctx.Done():
		return nil
	case <-done:
		return nil
	}
}

// PortForward is not served: nothing listens in a fake sandbox.
func (streamer) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	return errors.New("fakecri forwards no ports: its sandboxes have no network behind them")
}

func writerOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// startStreaming serves the streaming server on addr (host:port, port 0
// for any) and returns it with the function that stops it.
func startStreaming(s *service, addr string) (streaming.Server, func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("streaming server: %w", err)
	}
	cfg := streaming.DefaultConfig
	cfg.Addr = l.Addr().String()
	cfg.BaseURL = &url.URL{Scheme: "http", Host: cfg.Addr}
	srv, err := streaming.NewServer(cfg, streamer{s})
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	h := &http.Server{Handler: srv}
	go h.Serve(l)
	return srv, func() { h.Close() }, nil
}

func (s *service) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	if err := s.mustRun(req.ContainerId); err != nil {
		return nil, err
	}
	return s.stream.GetExec(req)
}

func (s *service) Attach(_ context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	if err := s.mustRun(req.ContainerId); err != nil {
		return nil, err
	}
	return s.stream.GetAttach(req)
}

// ExecSync runs cmd of the command set at once (none of them waits), so the
// timeout never applies.
func (s *service) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	s.mu.Lock()
	if c, ok := s.containers[req.ContainerId]; ok {
		s.action(c, "ExecSync", req.Timeout, req.Cmd)
	}
	s.mu.Unlock()
	var out, errOut bytes.Buffer
	code, err := s.run(req.ContainerId, req.Cmd, nil, &out, &errOut)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ExecSyncResponse{Stdout: out.Bytes(), Stderr: errOut.Bytes(), ExitCode: int32(code)}, nil
}

// mustRun refuses a stream into a container that is gone or not running
// before the kubelet is given a URL for it.
func (s *service) mustRun(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[id]
	if !ok {
		return notFound("container", id)
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %q is %s, not running", id, c.status.State)
	}
	return nil
}

// exited returns a channel closed when container id stops running.
func (s *service) exited(id string) (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[id]
	if !ok {
		return nil, notFound("container", id)
	}
	return c.done, nil
}

// isCommand tells whether cmd starts with a command of the set.
func isCommand(cmd []string) bool {
	return len(cmd) > 0 && slices.Contains(Commands, cmd[0])
}
