// Package fakecri serves a container runtime for tests: the CRI v1 runtime
// and image services over gRPC, keeping pod sandboxes, containers and images
// in memory, with no process or network behind them. A kubelet pointed at it
// starts, reports a ready runtime and runs pods: a started container stays
// running until the kubelet stops it (or its `stop` command ends it).
//
// Its containers can be looked into as a real runtime's: a container whose
// command is one of the fake's command set (see Commands) prints to its log
// at the kubelet's LogPath in the CRI log format, so that the kubelet's own
// log reader serves `kubectl logs`; exec and attach go through the kubelet's
// CRI streaming server library to that command set; and the stats calls
// answer fixed numbers a test can expect (see ContainerCPUUsageCoreNanoSeconds
// and the constants beside it).
//
// It is written for a real kubelet rather than for unit tests, which is
// where it differs from upstream's fake (k8s.io/cri-api's testing package):
// images have a size (the kubelet's CRI client rejects a size of 0), the
// image file system is reported, a removed sandbox is gone, calls that CRI
// defines as idempotent are, unknown objects are NotFound errors, and it
// listens on a Windows named pipe under Wine.
package fakecri

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubelet/pkg/cri/streaming"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
)

// DefaultEndpoint is where the Windows kubelet looks for containerd.
const DefaultEndpoint = "npipe://./pipe/containerd-containerd"

// What Version reports; the kubelet logs the name and version and puts them
// into the node's containerRuntimeVersion.
const (
	RuntimeName       = "fakecri"
	RuntimeVersion    = "1.0.0"
	RuntimeAPIVersion = "v1"
)

// DefaultImageSize is the size of every image unless Options say otherwise:
// about that of a Windows nanoserver image, so that image garbage collection
// and the node status see plausible numbers.
const DefaultImageSize = 128 << 20

// DefaultPodCIDR is where pod IPs come from unless Options say otherwise:
// containerd's default CNI range.
const DefaultPodCIDR = "10.88.0.0/16"

// Options configure a Server.
type Options struct {
	// ImageSize is the size in bytes of every image; 0 means
	// DefaultImageSize. The kubelet refuses images of size 0.
	ImageSize uint64
	// Images are present from the start, as if pulled before.
	Images []string
	// ImageFsDir is reported as the mount point of the image and container
	// file systems; the kubelet's stats read its capacity from the host.
	// It is created if missing. Empty reports no file system.
	ImageFsDir string
	// PodCIDR is the range pod sandboxes get their IPs from, in order;
	// empty means DefaultPodCIDR. Nothing listens on them.
	PodCIDR string
	// CallLog, when set, is told of every call and its error, if any.
	CallLog func(method string, err error)
	// Actions, when set, is told of each stop of a container, how a
	// stop that took time ended, each ExecSync in one and each image pull
	// (see Action), before the call returns.
	Actions func(Action)
	// PodCalls, when set, is told of each call that succeeded on one
	// pod's sandbox or container (see PodCall), after it returned.
	PodCalls func(PodCall)
	// FailPulls are image references whose pull fails, as a registry
	// that does not have them would make it (NotFound); a test's way to
	// show a pull that does not work.
	FailPulls []string
	// Registries are registries whose images need credentials, by host
	// (registry.example.com, or docker.io for Docker Hub's): a pull
	// without them, or with others, fails as the registry's 401 makes
	// containerd's fail (Unknown, "401 Unauthorized"). Actions, when set,
	// is told of each pull with the user it came with.
	Registries map[string]Credential
	// StateFile, when set, is rewritten (a new file renamed into place)
	// after each call that left the runtime's sandboxes or containers
	// other than they were: a test that cannot reach the runtime's
	// endpoint (a named pipe under Wine) reads what the runtime holds
	// there (see State).
	StateFile string
	// StreamAddr is where the exec and attach streaming server listens;
	// empty means 127.0.0.1 on any free port. The kubelet connects to it
	// and proxies the API server's streams there.
	StreamAddr string
}

// Credential is what a registry of Options.Registries takes: the CRI pull
// request's AuthConfig must carry this user and password, as username and
// password or as auth (base64 of "user:password"), which is how the
// kubelet and containerd hand on a pull secret's entry.
type Credential struct {
	Username, Password string
}

// The stats every container and sandbox reports: fixed, so that a test
// reading /stats/summary or /metrics/resource through the kubelet knows
// what to expect. A sandbox reports the sum of its running containers'
// CPU and memory, and the network and process figures below.
const (
	ContainerCPUUsageCoreNanoSeconds = 1_500_000_000 // 1.5 s of CPU time
	ContainerCPUUsageNanoCores       = 25_000_000    // 25 millicores
	ContainerMemoryWorkingSetBytes   = 24 << 20      // 24 MiB
	ContainerMemoryAvailableBytes    = 1000 << 20
	ContainerMemoryPageFaults        = 4321
	ContainerMemoryCommitBytes       = 32 << 20
	ContainerWritableLayerBytes      = 2 << 20
	SandboxNetworkInterface          = "vEthernet (fakecri)"
	SandboxNetworkRxBytes            = 123_456
	SandboxNetworkTxBytes            = 654_321
	SandboxProcessesPerContainer     = 1
)

// Server is a fake CRI runtime and image service.
type Server struct {
	grpc       *grpc.Server
	svc        *service
	stopStream func()
}

// New returns a Server whose runtime and network are ready.
func New(opts Options) (*Server, error) {
	if opts.ImageSize == 0 {
		opts.ImageSize = DefaultImageSize
	}
	cidr := opts.PodCIDR
	if cidr == "" {
		cidr = DefaultPodCIDR
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR: %w", err)
	}
	if opts.ImageFsDir != "" {
		if err := os.MkdirAll(opts.ImageFsDir, 0o755); err != nil {
			return nil, fmt.Errorf("image file system directory: %w", err)
		}
	}
	svc := &service{
		opts:       opts,
		podCIDR:    prefix.Masked(),
		lastIP:     prefix.Masked().Addr().Next(), // .1 is the gateway
		sandboxes:  map[string]*sandbox{},
		containers: map[string]*container{},
		images:     map[string]*runtimeapi.Image{},
	}
	for _, name := range opts.Images {
		svc.addImage(name)
	}
	streamAddr := opts.StreamAddr
	if streamAddr == "" {
		streamAddr = "127.0.0.1:0"
	}
	stream, stopStream, err := startStreaming(svc, streamAddr)
	if err != nil {
		return nil, err
	}
	svc.stream = stream

	var serverOpts []grpc.ServerOption
	if opts.CallLog != nil || opts.PodCalls != nil || opts.StateFile != "" {
		serverOpts = append(serverOpts, grpc.UnaryInterceptor(
			func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				resp, err := h(ctx, req)
				if opts.StateFile != "" {
					svc.saveState()
				}
				if opts.CallLog != nil {
					opts.CallLog(info.FullMethod, err)
				}
				if opts.PodCalls != nil && err == nil {
					if c, ok := svc.podCall(info.FullMethod, req, resp); ok {
						opts.PodCalls(c)
					}
				}
				return resp, err
			}))
	}
	s := &Server{grpc: grpc.NewServer(serverOpts...), svc: svc, stopStream: stopStream}
	runtimeapi.RegisterRuntimeServiceServer(s.grpc, svc)
	runtimeapi.RegisterImageServiceServer(s.grpc, svc)
	return s, nil
}

// Serve answers CRI calls on l until Stop; it closes l.
func (s *Server) Serve(l net.Listener) error { return s.grpc.Serve(l) }

// Stop ends Serve and closes every connection, streams included.
func (s *Server) Stop() {
	s.grpc.Stop()
	s.stopStream()
}

// PipeSDDL is the descriptor Listen serves a named pipe with: owned by
// Administrators and open to SYSTEM and Administrators only, as an
// operator's own runtime serves it for the node to trust it
// (servertrust.AdminOnlyPipeSDDL). Under Wine every process runs as the
// same user, so the node's other rule (the containerd service's process,
// running as SYSTEM) cannot be met there.
const PipeSDDL = servertrust.AdminOnlyPipeSDDL

// Listen listens on a CRI endpoint: npipe://./pipe/NAME (Windows only,
// with PipeSDDL), tcp://HOST:PORT or unix:///PATH.
func Listen(endpoint string) (net.Listener, error) { return ListenWith(endpoint, PipeSDDL) }

// ListenWith is Listen with the named pipe's descriptor pipeSDDL; ""
// gives go-winio's default, under which the pipe is its creator's: what
// a program any user starts gets.
func ListenWith(endpoint, pipeSDDL string) (net.Listener, error) {
	u, err := url.Parse(strings.ReplaceAll(endpoint, `\`, "/"))
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	switch u.Scheme {
	case "tcp":
		return net.Listen("tcp", u.Host)
	case "unix":
		// A socket file left by an earlier run would make the listen fail.
		if err := os.Remove(u.Path); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
		}
		return net.Listen("unix", u.Path)
	case "npipe":
		// npipe://./pipe/NAME parses with host "." and path /pipe/NAME;
		// npipe:////./pipe/NAME with path //./pipe/NAME.
		host, path := u.Host, u.Path
		if host == "" && strings.HasPrefix(path, "//") {
			host, path, _ = strings.Cut(strings.TrimPrefix(path, "//"), "/")
			path = "/" + path
		}
		name, ok := strings.CutPrefix(path, "/pipe/")
		if host != "." || !ok || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("endpoint %q: want npipe://./pipe/NAME", endpoint)
		}
		return listenPipe(`\\.\pipe\`+name, pipeSDDL)
	default:
		return nil, fmt.Errorf("endpoint %q: want npipe://./pipe/NAME, tcp://HOST:PORT or unix:///PATH", endpoint)
	}
}

type sandbox struct {
	status runtimeapi.PodSandboxStatus
}

type container struct {
	status    runtimeapi.ContainerStatus
	sandboxID string
	resources *runtimeapi.ContainerResources
	// command is the container's command and arguments, run at start when
	// it is one of the command set.
	command []string
	// done is closed when the container stops running.
	done  chan struct{}
	logMu sync.Mutex
	// stopCode is the exit code a stop ends the container with, and
	// stopTakes how long its main process takes to exit after the stop
	// signal (CmdOnStop).
	stopCode  int32
	stopTakes time.Duration
	// stopping is set once a stop that takes time has begun.
	stopping bool
}

// service implements both CRI services over one state. The embedded
// Unimplemented servers answer what a runtime without processes cannot do
// (port forwarding, checkpoints, container events) with
// codes.Unimplemented, which the kubelet reports per call.
type service struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	opts    Options
	podCIDR netip.Prefix
	stream  streaming.Server

	mu         sync.Mutex
	lastIP     netip.Addr
	sandboxes  map[string]*sandbox
	containers map[string]*container
	images     map[string]*runtimeapi.Image // by ID

	// stateMu orders the writes of Options.StateFile; savedState is
	// what was written last.
	stateMu    sync.Mutex
	savedState []byte
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "%s %q not found", kind, id)
}

func newID() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func (s *service) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           "0.1.0", // the only value CRI defines for this field
		RuntimeName:       RuntimeName,
		RuntimeVersion:    RuntimeVersion,
		RuntimeApiVersion: RuntimeAPIVersion,
	}, nil
}

func (s *service) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

func (s *service) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{}, nil
}

// UpdateRuntimeConfig accepts the node's pod CIDR from the kubelet. A real
// runtime hands it to its network plugin; here sandbox IPs come from
// Options.PodCIDR, so that a test knows them before the node has a CIDR.
func (s *service) UpdateRuntimeConfig(context.Context, *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// hostNetwork tells whether a sandbox shares the node's network: a Linux
// pod with the NODE network namespace or a Windows host process pod.
func hostNetwork(cfg *runtimeapi.PodSandboxConfig) bool {
	return cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE ||
		cfg.GetWindows().GetSecurityContext().GetHostProcess()
}

func (s *service) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil {
		return nil, status.Error(codes.InvalidArgument, "sandbox config without metadata")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := runtimeapi.NamespaceMode_POD
	var network *runtimeapi.PodSandboxNetworkStatus
	if hostNetwork(cfg) {
		ns = runtimeapi.NamespaceMode_NODE
	} else {
		ip := s.lastIP.Next()
		// The last IPv4 address of the range is its broadcast address.
		if !s.podCIDR.Contains(ip) || ip.Is4() && !s.podCIDR.Contains(ip.Next()) {
			return nil, status.Errorf(codes.ResourceExhausted, "pod CIDR %s has no address left", s.podCIDR)
		}
		s.lastIP = ip
		network = &runtimeapi.PodSandboxNetworkStatus{Ip: ip.String()}
	}
	id := newID()
	s.sandboxes[id] = &sandbox{status: runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  cfg.Metadata,
		State:     runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: time.Now().UnixNano(),
		Network:   network,
		// The kubelet compares the sandbox's network namespace mode with
		// the pod's and recreates the sandbox when they differ.
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: &runtimeapi.NamespaceOption{Network: ns},
		}},
		Labels:         cfg.Labels,
		Annotations:    cfg.Annotations,
		RuntimeHandler: req.RuntimeHandler,
	}}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

// StopPodSandbox stops the sandbox and its containers. CRI requires success
// for a sandbox that is already gone.
func (s *service) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[req.PodSandboxId]
	if !ok {
		return &runtimeapi.StopPodSandboxResponse{}, nil
	}
	for _, c := range s.containers {
		if c.sandboxID == req.PodSandboxId {
			stop(c)
		}
	}
	sb.status.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox removes the sandbox and its containers; removing one
// that is gone succeeds.
func (s *service) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.containers {
		if c.sandboxID == req.PodSandboxId {
			delete(s.containers, id)
		}
	}
	delete(s.sandboxes, req.PodSandboxId)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (s *service) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[req.PodSandboxId]
	if !ok {
		return nil, notFound("pod sandbox", req.PodSandboxId)
	}
	st := sb.status
	return &runtimeapi.PodSandboxStatusResponse{Status: &st}, nil
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (s *service) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	items := []*runtimeapi.PodSandbox{}
	for _, sb := range s.sandboxes {
		st := &sb.status
		if f.GetId() != "" && f.GetId() != st.Id ||
			f.GetState() != nil && f.GetState().State != st.State ||
			!labelsMatch(f.GetLabelSelector(), st.Labels) {
			continue
		}
		items = append(items, &runtimeapi.PodSandbox{
			Id: st.Id, Metadata: st.Metadata, State: st.State, CreatedAt: st.CreatedAt,
			Labels: st.Labels, Annotations: st.Annotations, RuntimeHandler: st.RuntimeHandler,
		})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: items}, nil
}

func (s *service) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil || cfg.GetImage().GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "container config without metadata or image")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[req.PodSandboxId]
	if !ok {
		return nil, notFound("pod sandbox", req.PodSandboxId)
	}
	if sb.status.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %q is not ready", req.PodSandboxId)
	}
	img := s.findImage(cfg.Image.Image)
	if img == nil {
		return nil, notFound("image", cfg.Image.Image)
	}
	logPath := ""
	if dir := req.GetSandboxConfig().GetLogDirectory(); dir != "" && cfg.LogPath != "" {
		logPath = filepath.Join(dir, cfg.LogPath)
	}
	id := newID()
	s.containers[id] = &container{
		sandboxID: req.PodSandboxId,
		command:   append(append([]string{}, cfg.Command...), cfg.Args...),
		done:      make(chan struct{}),
		status: runtimeapi.ContainerStatus{
			Id:          id,
			Metadata:    cfg.Metadata,
			State:       runtimeapi.ContainerState_CONTAINER_CREATED,
			CreatedAt:   time.Now().UnixNano(),
			Image:       &runtimeapi.ImageSpec{Image: img.RepoTags[0], Annotations: cfg.Image.Annotations},
			ImageRef:    img.Id,
			Labels:      cfg.Labels,
			Annotations: cfg.Annotations,
			Mounts:      cfg.Mounts,
			LogPath:     logPath,
		},
	}
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

// StartContainer runs the container. When its command is one of the
// command set, that command runs first with its output going to the log;
// a command the fake does not know prints nothing, so that pods written for
// real images run too. Either way the container then keeps running.
func (s *service) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	c, err := s.start(req.ContainerId)
	if err != nil {
		return nil, err
	}
	if isCommand(c.command) {
		out, errOut := c.logs()
		s.command(c, c.command, nil, out, errOut)
	}
	return &runtimeapi.StartContainerResponse{}, nil
}

func (s *service) start(id string) (*container, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[id]
	if !ok {
		return nil, notFound("container", id)
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not created", id, c.status.State)
	}
	// The kubelet reads and rotates the log file of a running container;
	// an empty one is the log of a container that prints nothing.
	if p := c.status.LogPath; p != "" {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640); err == nil {
			f.Close()
		}
	}
	c.status.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.status.StartedAt = time.Now().UnixNano()
	return c, nil
}

// stop ends a created or running container as if its main process
// exited on the stop signal at once: with code 0 unless its `onstop`
// command set another.
func stop(c *container) {
	reason := "Completed"
	if c.stopCode != 0 {
		reason = "Error"
	}
	finish(c, c.stopCode, reason)
}

// ExitKilled is the exit code of a container the runtime killed when the
// stop's grace period ended before its main process exited.
const ExitKilled = 137

// PodCall is a call on one pod's sandbox or container, with the pod it was
// about: a test reads back which pod the kubelet created a sandbox for,
// which container it started, and which ones it looked at (the kubelet
// reads PodSandboxStatus and ContainerStatus of a pod whenever it inspects
// it, as a new kubelet does with every pod it finds).
type PodCall struct {
	// Call is the CRI method: RunPodSandbox, StopPodSandbox,
	// PodSandboxStatus, CreateContainer, StartContainer, StopContainer or
	// ContainerStatus.
	Call string
	// Pod is the pod as namespace/name, from the sandbox's metadata or the
	// kubelet's labels on the container.
	Pod string
	// Sandbox is the sandbox's ID for the sandbox calls; Container is the
	// container's name and ID its ID for the container calls.
	Sandbox, Container, ID string
}

// String is the call on one line, as `fakecri -v` logs it after
// "pod call: ", e.g. "RunPodSandbox pod=default/app sandbox=ID" or
// "StartContainer pod=default/app container=app id=ID".
func (c PodCall) String() string {
	if c.Sandbox != "" {
		return fmt.Sprintf("%s pod=%s sandbox=%s", c.Call, c.Pod, c.Sandbox)
	}
	return fmt.Sprintf("%s pod=%s container=%s id=%s", c.Call, c.Pod, c.Container, c.ID)
}

// podCall is the PodCall of a call that succeeded, if it is one on a pod's
// sandbox or container that still exists.
func (s *service) podCall(method string, req, resp any) (PodCall, bool) {
	sandboxID, containerID := "", ""
	switch r := req.(type) {
	case *runtimeapi.RunPodSandboxRequest:
		sandboxID = resp.(*runtimeapi.RunPodSandboxResponse).GetPodSandboxId()
	case *runtimeapi.StopPodSandboxRequest:
		sandboxID = r.PodSandboxId
	case *runtimeapi.PodSandboxStatusRequest:
		sandboxID = r.PodSandboxId
	case *runtimeapi.CreateContainerRequest:
		containerID = resp.(*runtimeapi.CreateContainerResponse).GetContainerId()
	case *runtimeapi.StartContainerRequest:
		containerID = r.ContainerId
	case *runtimeapi.StopContainerRequest:
		containerID = r.ContainerId
	case *runtimeapi.ContainerStatusRequest:
		containerID = r.ContainerId
	default:
		return PodCall{}, false
	}
	call := PodCall{Call: method[strings.LastIndex(method, "/")+1:]}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sandboxID != "" {
		sb, ok := s.sandboxes[sandboxID]
		if !ok {
			return PodCall{}, false
		}
		md := sb.status.Metadata
		call.Pod, call.Sandbox = md.GetNamespace()+"/"+md.GetName(), sandboxID
		return call, true
	}
	c, ok := s.containers[containerID]
	if !ok {
		return PodCall{}, false
	}
	st := &c.status
	call.Pod = st.Labels["io.kubernetes.pod.namespace"] + "/" + st.Labels["io.kubernetes.pod.name"]
	call.Container, call.ID = st.Metadata.GetName(), containerID
	return call, true
}

// Action is a call on one container that a test reads back: a stop, with
// the grace period the kubelet gave it, or an ExecSync (how the kubelet
// runs a preStop exec hook, and exec probes), with its command and time
// limit; the end of a stop that took time (the container's main process
// exited by itself, or was killed when the grace period ended, or the
// caller gave up waiting); or an image pull, with the user of its
// credentials.
type Action struct {
	// Call is "StopContainer", "ExecSync", "Exited" or "Killed" (a
	// stop that took time ended), "Abandoned" (the caller of such a stop
	// went away first) or "PullImage".
	Call string
	// Pod is the container's pod as namespace/name and Container its name,
	// from the kubelet's labels and the container's metadata.
	Pod       string
	Container string
	// Timeout is StopContainer's grace period or ExecSync's time limit,
	// in seconds.
	Timeout int64
	// Command is ExecSync's.
	Command []string
	// Code is the exit code of Exited and Killed, and After how long the
	// stop took until then, in whole seconds.
	Code  int32
	After time.Duration
	// Image is PullImage's, and User the user name of its credentials
	// ("" for none).
	Image, User string
}

// String is the action on one line, as `fakecri -v` logs it after
// "action: ", e.g. "StopContainer pod=default/app container=app
// timeout=30s", "Exited pod=default/app container=app code=1 after=5s" or
// "PullImage image=registry.example.com/app:1 user=robot".
func (a Action) String() string {
	switch a.Call {
	case "PullImage":
		return fmt.Sprintf("%s image=%s user=%s", a.Call, a.Image, a.User)
	case "Exited", "Killed", "Abandoned":
		line := fmt.Sprintf("%s pod=%s container=%s", a.Call, a.Pod, a.Container)
		if a.Call != "Abandoned" {
			line += fmt.Sprintf(" code=%d", a.Code)
		}
		return line + fmt.Sprintf(" after=%s", a.After.Round(time.Second))
	}
	line := fmt.Sprintf("%s pod=%s container=%s timeout=%ds", a.Call, a.Pod, a.Container, a.Timeout)
	if a.Call == "ExecSync" {
		line += fmt.Sprintf(" command=%q", strings.Join(a.Command, " "))
	}
	return line
}

// action tells Options.Actions of a call on c. The caller holds s.mu.
func (s *service) action(c *container, call string, timeout int64, command []string) {
	s.tell(c, Action{Call: call, Timeout: timeout, Command: command})
}

// tell tells Options.Actions of a, a call on c. The caller holds s.mu.
func (s *service) tell(c *container, a Action) {
	if s.opts.Actions == nil {
		return
	}
	st := &c.status
	a.Pod = st.Labels["io.kubernetes.pod.namespace"] + "/" + st.Labels["io.kubernetes.pod.name"]
	a.Container = st.Metadata.GetName()
	s.opts.Actions(a)
}

// StopContainer is idempotent, as CRI requires, also for a container that
// is gone. A container's main process exits at once on the stop signal,
// unless its `onstop` command made it take time: then the call returns
// when it has exited, or kills it when the grace period (the request's
// timeout) ends first, as containerd does. Options.Actions is told of the
// stop of a running container, and of how a stop that took time ended.
func (s *service) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	s.mu.Lock()
	c, ok := s.containers[req.ContainerId]
	if !ok || c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING || c.stopTakes == 0 {
		if ok {
			if c.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				s.action(c, "StopContainer", req.Timeout, nil)
			}
			stop(c)
		}
		s.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	}
	if c.stopping {
		// A second stop of one under way waits for the same end.
		s.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
		}
		return &runtimeapi.StopContainerResponse{}, nil
	}
	c.stopping = true
	s.action(c, "StopContainer", req.Timeout, nil)
	grace := time.Duration(req.Timeout) * time.Second
	s.mu.Unlock()
	s.stopping(ctx, c, grace)
	return &runtimeapi.StopContainerResponse{}, nil
}

// stopping waits for a container whose main process takes c.stopTakes to
// exit after its stop signal, and kills it when grace ends first. A caller
// that goes away leaves the stop going on, as a real runtime's does.
func (s *service) stopping(ctx context.Context, c *container, grace time.Duration) {
	began := time.Now()
	exits := time.NewTimer(c.stopTakes)
	defer exits.Stop()
	kill := time.NewTimer(grace)
	defer kill.Stop()
	end := func(call string, code int32, reason string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c.status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			return // ended otherwise meanwhile (its sandbox stopped)
		}
		finish(c, code, reason)
		s.tell(c, Action{Call: call, Code: code, After: time.Since(began)})
	}
	reason := "Completed"
	if c.stopCode != 0 {
		reason = "Error"
	}
	for {
		select {
		case <-c.done:
			return
		case <-exits.C:
			end("Exited", c.stopCode, reason)
			return
		case <-kill.C:
			end("Killed", ExitKilled, "Error")
			return
		case <-ctx.Done():
			s.mu.Lock()
			s.tell(c, Action{Call: "Abandoned", After: time.Since(began)})
			s.mu.Unlock()
			ctx = context.Background()
		}
	}
}

func (s *service) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.containers, req.ContainerId)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (s *service) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	items := []*runtimeapi.Container{}
	for _, c := range s.containers {
		st := &c.status
		if f.GetId() != "" && f.GetId() != st.Id ||
			f.GetPodSandboxId() != "" && f.GetPodSandboxId() != c.sandboxID ||
			f.GetState() != nil && f.GetState().State != st.State ||
			!labelsMatch(f.GetLabelSelector(), st.Labels) {
			continue
		}
		items = append(items, &runtimeapi.Container{
			Id: st.Id, PodSandboxId: c.sandboxID, Metadata: st.Metadata, Image: st.Image, ImageRef: st.ImageRef,
			State: st.State, CreatedAt: st.CreatedAt, Labels: st.Labels, Annotations: st.Annotations,
		})
	}
	return &runtimeapi.ListContainersResponse{Containers: items}, nil
}

func (s *service) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	st := c.status
	st.Resources = c.resources
	return &runtimeapi.ContainerStatusResponse{Status: &st}, nil
}

func (s *service) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	c.resources = &runtimeapi.ContainerResources{Linux: req.Linux, Windows: req.Windows}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// ReopenContainerLog is what the kubelet calls after rotating a log; CRI
// wants an error for a container that is not running.
func (s *service) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is not running", req.ContainerId)
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// containerStats reports a container's fixed usage (see
// ContainerCPUUsageCoreNanoSeconds), in the fields every OS reads.
func (s *service) containerStats(c *container, now int64) *runtimeapi.ContainerStats {
	st := &c.status
	cs := &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: st.Id, Metadata: st.Metadata, Labels: st.Labels, Annotations: st.Annotations},
		Cpu: &runtimeapi.CpuUsage{Timestamp: now,
			UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: ContainerCPUUsageCoreNanoSeconds},
			UsageNanoCores:       &runtimeapi.UInt64Value{Value: ContainerCPUUsageNanoCores}},
		Memory: &runtimeapi.MemoryUsage{Timestamp: now,
			WorkingSetBytes: &runtimeapi.UInt64Value{Value: ContainerMemoryWorkingSetBytes},
			AvailableBytes:  &runtimeapi.UInt64Value{Value: ContainerMemoryAvailableBytes},
			PageFaults:      &runtimeapi.UInt64Value{Value: ContainerMemoryPageFaults}},
		WritableLayer: s.writableLayer(now),
	}
	return cs
}

// writableLayer is a container's layer on the image file system; nil when
// no file system is reported.
func (s *service) writableLayer(now int64) *runtimeapi.FilesystemUsage {
	if s.opts.ImageFsDir == "" {
		return nil
	}
	return &runtimeapi.FilesystemUsage{
		Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: s.opts.ImageFsDir},
		UsedBytes: &runtimeapi.UInt64Value{Value: ContainerWritableLayerBytes}, InodesUsed: &runtimeapi.UInt64Value{Value: 1},
	}
}

// sandboxStats reports a sandbox the way containerd does on Windows: the
// Windows fields, with its running containers' usage in them and summed
// for the pod. The caller holds s.mu.
func (s *service) sandboxStats(sb *sandbox, now int64) *runtimeapi.PodSandboxStats {
	st := &sb.status
	var running uint64
	var containers []*runtimeapi.WindowsContainerStats
	for _, c := range s.containers {
		if c.sandboxID != st.Id || c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		running++
		cs := s.containerStats(c, now)
		var layer *runtimeapi.WindowsFilesystemUsage
		if l := cs.WritableLayer; l != nil {
			layer = &runtimeapi.WindowsFilesystemUsage{Timestamp: l.Timestamp, FsId: l.FsId, UsedBytes: l.UsedBytes}
		}
		containers = append(containers, &runtimeapi.WindowsContainerStats{
			Attributes: cs.Attributes,
			Cpu: &runtimeapi.WindowsCpuUsage{Timestamp: now, UsageCoreNanoSeconds: cs.Cpu.UsageCoreNanoSeconds,
				UsageNanoCores: cs.Cpu.UsageNanoCores},
			Memory: &runtimeapi.WindowsMemoryUsage{Timestamp: now, WorkingSetBytes: cs.Memory.WorkingSetBytes,
				AvailableBytes: cs.Memory.AvailableBytes, PageFaults: cs.Memory.PageFaults,
				CommitMemoryBytes: &runtimeapi.UInt64Value{Value: ContainerMemoryCommitBytes}},
			WritableLayer: layer,
		})
	}
	u := func(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }
	iface := &runtimeapi.WindowsNetworkInterfaceUsage{Name: SandboxNetworkInterface,
		RxBytes: u(SandboxNetworkRxBytes), TxBytes: u(SandboxNetworkTxBytes),
		RxPacketsDropped: u(0), TxPacketsDropped: u(0)}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: st.Id, Metadata: st.Metadata, Labels: st.Labels, Annotations: st.Annotations},
		Windows: &runtimeapi.WindowsPodSandboxStats{
			Cpu: &runtimeapi.WindowsCpuUsage{Timestamp: now, UsageCoreNanoSeconds: u(running * ContainerCPUUsageCoreNanoSeconds),
				UsageNanoCores: u(running * ContainerCPUUsageNanoCores)},
			Memory: &runtimeapi.WindowsMemoryUsage{Timestamp: now, WorkingSetBytes: u(running * ContainerMemoryWorkingSetBytes),
				AvailableBytes: u(ContainerMemoryAvailableBytes), PageFaults: u(running * ContainerMemoryPageFaults),
				CommitMemoryBytes: u(running * ContainerMemoryCommitBytes)},
			Network: &runtimeapi.WindowsNetworkUsage{Timestamp: now, DefaultInterface: iface,
				Interfaces: []*runtimeapi.WindowsNetworkInterfaceUsage{iface}},
			Process:    &runtimeapi.WindowsProcessUsage{Timestamp: now, ProcessCount: u(running * SandboxProcessesPerContainer)},
			Containers: containers,
		},
	}
}

func (s *service) PodSandboxStats(_ context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[req.PodSandboxId]
	if !ok {
		return nil, notFound("pod sandbox", req.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: s.sandboxStats(sb, time.Now().UnixNano())}, nil
}

func (s *service) ListPodSandboxStats(_ context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	f := req.GetFilter()
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	stats := []*runtimeapi.PodSandboxStats{}
	for _, sb := range s.sandboxes {
		if f.GetId() != "" && f.GetId() != sb.status.Id || !labelsMatch(f.GetLabelSelector(), sb.status.Labels) {
			continue
		}
		stats = append(stats, s.sandboxStats(sb, now))
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: stats}, nil
}

func (s *service) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	return &runtimeapi.ContainerStatsResponse{Stats: s.containerStats(c, time.Now().UnixNano())}, nil
}

func (s *service) ListContainerStats(_ context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	stats := []*runtimeapi.ContainerStats{}
	for _, c := range s.containers {
		if f.GetId() != "" && f.GetId() != c.status.Id ||
			f.GetPodSandboxId() != "" && f.GetPodSandboxId() != c.sandboxID ||
			!labelsMatch(f.GetLabelSelector(), c.status.Labels) {
			continue
		}
		stats = append(stats, s.containerStats(c, now))
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: stats}, nil
}

func (s *service) ListMetricDescriptors(context.Context, *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	return &runtimeapi.ListMetricDescriptorsResponse{}, nil
}

func (s *service) ListPodSandboxMetrics(context.Context, *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	return &runtimeapi.ListPodSandboxMetricsResponse{}, nil
}

// imageID is the ID an image of this name gets: a content-like digest, so
// that the kubelet's image references look like a real runtime's.
func imageID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// addImage makes the image present; the caller holds s.mu or is New.
func (s *service) addImage(name string) *runtimeapi.Image {
	if img := s.findImage(name); img != nil {
		return img
	}
	img := &runtimeapi.Image{
		Id:       imageID(name),
		RepoTags: []string{name},
		Size_:    s.opts.ImageSize,
		Spec:     &runtimeapi.ImageSpec{Image: name},
	}
	s.images[img.Id] = img
	return img
}

// findImage finds an image by ID or by name.
func (s *service) findImage(ref string) *runtimeapi.Image {
	if img, ok := s.images[ref]; ok {
		return img
	}
	for _, img := range s.images {
		for _, tag := range img.RepoTags {
			if tag == ref {
				return img
			}
		}
	}
	return nil
}

func (s *service) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	want := req.GetFilter().GetImage().GetImage()
	s.mu.Lock()
	defer s.mu.Unlock()
	images := []*runtimeapi.Image{}
	if want != "" {
		if img := s.findImage(want); img != nil {
			images = append(images, img)
		}
	} else {
		for _, img := range s.images {
			images = append(images, img)
		}
	}
	return &runtimeapi.ListImagesResponse{Images: images}, nil
}

// ImageStatus answers an image that is not present with no image and no
// error, as CRI defines; the kubelet then pulls it.
func (s *service) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &runtimeapi.ImageStatusResponse{Image: s.findImage(req.GetImage().GetImage())}, nil
}

// PullImage makes any image present at once; nothing is downloaded. An
// image of a registry of Options.Registries needs that registry's
// credentials.
func (s *service) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "no image to pull")
	}
	user, err := s.authorize(name, req.GetAuth())
	if s.opts.Actions != nil {
		s.opts.Actions(Action{Call: "PullImage", Image: name, User: user})
	}
	if err != nil {
		return nil, err
	}
	for _, f := range s.opts.FailPulls {
		if f == name {
			return nil, status.Errorf(codes.NotFound, "pull %s: the registry has no such image", name)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &runtimeapi.PullImageResponse{ImageRef: s.addImage(name).Id}, nil
}

// authorize checks a pull of image against the credentials its registry
// needs (Options.Registries) and returns the user the request came with.
// The error is the one containerd returns for a registry's 401, naming the
// registry and the user, never the password.
func (s *service) authorize(image string, auth *runtimeapi.AuthConfig) (string, error) {
	user, password := auth.GetUsername(), auth.GetPassword()
	if a := auth.GetAuth(); a != "" {
		if raw, err := base64.StdEncoding.DecodeString(a); err == nil {
			user, password, _ = strings.Cut(string(raw), ":")
		}
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return user, status.Errorf(codes.InvalidArgument, "pull %s: %v", image, err)
	}
	host := reference.Domain(named)
	want, ok := s.opts.Registries[host]
	if !ok {
		return user, nil
	}
	if user == "" {
		return user, status.Errorf(codes.Unknown, "failed to pull and unpack image %q: failed to authorize: %s: 401 Unauthorized (no credentials)", image, host)
	}
	if user != want.Username || password != want.Password {
		return user, status.Errorf(codes.Unknown, "failed to pull and unpack image %q: failed to authorize: %s: 401 Unauthorized (user %q)", image, host, user)
	}
	return user, nil
}

func (s *service) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if img := s.findImage(req.GetImage().GetImage()); img != nil {
		delete(s.images, img.Id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

func (s *service) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	if s.opts.ImageFsDir == "" {
		return &runtimeapi.ImageFsInfoResponse{}, nil
	}
	s.mu.Lock()
	var used uint64
	for _, img := range s.images {
		used += img.Size_
	}
	s.mu.Unlock()
	fs := []*runtimeapi.FilesystemUsage{{
		Timestamp:  time.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: s.opts.ImageFsDir},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(s.images))},
	}}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: fs, ContainerFilesystems: fs}, nil
}
