package fakecri

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crierrors "k8s.io/cri-api/pkg/errors"
	remote "k8s.io/cri-client/pkg"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

const pause = "registry.k8s.io/pause:3.9"

// serve starts a Server on endpoint, stops it when the test ends and
// returns the address it listens on.
func serve(t *testing.T, endpoint string, opts Options) string {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Serve(l); close(done) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return l.Addr().String()
}

// tcpClient serves opts on a loopback TCP port until the test ends and
// connects a plain gRPC client to it, as a test or a tool outside the
// kubelet would connect.
func tcpClient(t *testing.T, opts Options) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(serve(t, "tcp://127.0.0.1:0", opts), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// told keeps what the runtime tells a test through Options.Actions or
// Options.PodCalls, one line a call, as the runtime's goroutines add them.
type told struct {
	mu    sync.Mutex
	lines []string
}

// record is an Options.Actions or Options.PodCalls that keeps each call
// in to.
func record[T fmt.Stringer](to *told) func(T) {
	return func(v T) {
		to.mu.Lock()
		defer to.mu.Unlock()
		to.lines = append(to.lines, v.String())
	}
}

// reset forgets what was told so far.
func (to *told) reset() {
	to.mu.Lock()
	defer to.mu.Unlock()
	to.lines = nil
}

// want fails the test, naming what was told, unless it is want, in order.
func (to *told) want(t *testing.T, what string, want ...string) {
	t.Helper()
	to.mu.Lock()
	defer to.mu.Unlock()
	if got, want := strings.Join(to.lines, "\n"), strings.Join(want, "\n"); got != want {
		t.Errorf("%s\n%s\nwant\n%s", what, got, want)
	}
}

// pipes numbers the named pipes of the tests on Windows.
var pipes atomic.Int64

// kubeletClients connects the kubelet's own CRI clients, which apply the
// kubelet's checks to every answer, over a unix socket, or on Windows (make
// wine-test runs this package under Wine) over a named pipe, as the Windows
// kubelet reaches containerd.
func kubeletClients(t *testing.T, opts Options) (internalapi.RuntimeService, internalapi.ImageManagerService) {
	t.Helper()
	endpoint := "unix://" + filepath.Join(testdir.New(t, "fakecri-"), "cri.sock")
	if runtime.GOOS == "windows" {
		endpoint = fmt.Sprintf("npipe://./pipe/fakecri-test-%d-%d", os.Getpid(), pipes.Add(1))
	}
	serve(t, endpoint, opts)
	rs, err := remote.NewRemoteRuntimeService(endpoint, 10*time.Second, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	is, err := remote.NewRemoteImageService(endpoint, 10*time.Second, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs, is
}

func sandboxConfig(name, logDir string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: name + "-uid"},
		LogDirectory: logDir,
		Labels:       map[string]string{"io.kubernetes.pod.name": name},
	}
}

// testPod is a sandbox of pod namespace/web, as the kubelet runs it, and
// the pause image it pulled for the pod's containers.
type testPod struct {
	rs    internalapi.RuntimeService
	id    string
	cfg   *runtimeapi.PodSandboxConfig
	image string
}

// runPod runs the sandbox of pod namespace/web, its logs in a folder of
// the test's, and pulls pause for its containers.
func runPod(t *testing.T, rs internalapi.RuntimeService, is internalapi.ImageManagerService, namespace string) testPod {
	t.Helper()
	ctx := context.Background()
	cfg := sandboxConfig("web", testdir.New(t, "fakecri-"))
	cfg.Metadata.Namespace = namespace
	id, err := rs.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: pause}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return testPod{rs: rs, id: id, cfg: cfg, image: ref}
}

// start creates the container name in the pod, running command (the
// image's own without one) and labelled as the kubelet labels every
// container, starts it and returns its ID.
func (p testPod) start(t *testing.T, name string, command ...string) string {
	t.Helper()
	ctx := context.Background()
	id, err := p.rs.CreateContainer(ctx, p.id, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: p.image},
		Command:  command,
		Labels: map[string]string{"io.kubernetes.pod.name": p.cfg.Metadata.Name,
			"io.kubernetes.pod.namespace": p.cfg.Metadata.Namespace, "io.kubernetes.container.name": name},
	}, p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.rs.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestRuntimeIsReadyAndNamesItself(t *testing.T) {
	rs, _ := kubeletClients(t, Options{})
	ctx := context.Background()
	v, err := rs.Version(ctx, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if v.RuntimeName != RuntimeName || v.RuntimeApiVersion != "v1" || v.RuntimeVersion == "" {
		t.Errorf("version %+v", v)
	}
	st, err := rs.Status(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, c := range st.Status.Conditions {
		ready[c.Type] = c.Status
	}
	if !ready[runtimeapi.RuntimeReady] || !ready[runtimeapi.NetworkReady] {
		t.Errorf("conditions %v: want runtime and network ready", st.Status.Conditions)
	}
}

// The kubelet's image client refuses an image whose size is 0; a pulled
// image must pass it, and the image file system must account for it.
func TestPulledImagePassesTheKubeletsChecks(t *testing.T) {
	fsDir := filepath.Join(testdir.New(t, "fakecri-"), "images")
	_, is := kubeletClients(t, Options{Images: []string{pause}, ImageFsDir: fsDir})
	ctx := context.Background()
	const nginx = "mcr.microsoft.com/windows/nanoserver:ltsc2022"

	st, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: nginx}, false)
	if err != nil || st.Image != nil {
		t.Fatalf("an image never pulled: %v, %v; want no image and no error", st.GetImage(), err)
	}
	ref, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: nginx}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref, "sha256:") {
		t.Errorf("image ref %q is not a digest", ref)
	}
	for _, name := range []string{nginx, ref} {
		st, err = is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: name}, false)
		if err != nil {
			t.Fatalf("ImageStatus(%s): %v", name, err)
		}
		if st.Image.GetId() != ref || st.Image.Size_ != DefaultImageSize || st.Image.RepoTags[0] != nginx {
			t.Errorf("ImageStatus(%s) = %+v", name, st.Image)
		}
	}
	images, err := is.ListImages(ctx, nil)
	if err != nil || len(images) != 2 {
		t.Fatalf("ListImages: %d images, %v; want the preloaded and the pulled one", len(images), err)
	}

	fs, err := is.ImageFsInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.ImageFilesystems) != 1 || fs.ImageFilesystems[0].FsId.Mountpoint != fsDir ||
		fs.ImageFilesystems[0].UsedBytes.Value != 2*DefaultImageSize {
		t.Errorf("ImageFsInfo %+v", fs)
	}
	if _, err := os.Stat(fsDir); err != nil {
		t.Errorf("image file system directory: %v", err)
	}

	if err := is.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: nginx}); err != nil {
		t.Fatal(err)
	}
	if err := is.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: nginx}); err != nil {
		t.Errorf("removing a removed image: %v", err)
	}
	if st, _ := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: nginx}, false); st.GetImage() != nil {
		t.Error("the removed image is still there")
	}
}

// A pod's life as the kubelet drives it: sandbox, container, stop, removal.
func TestPodLifecycle(t *testing.T) {
	rs, is := kubeletClients(t, Options{})
	ctx := context.Background()
	logDir := testdir.New(t, "fakecri-")

	id, err := rs.RunPodSandbox(ctx, sandboxConfig("web", logDir), "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := rs.RunPodSandbox(ctx, sandboxConfig("db", logDir), "")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := rs.PodSandboxStatus(ctx, id, false)
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := rs.PodSandboxStatus(ctx, other, false)
	if sb.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY || sb.Status.Metadata.Name != "web" {
		t.Errorf("sandbox status %+v", sb.Status)
	}
	ip, err := netip.ParseAddr(sb.Status.Network.GetIp())
	if err != nil || !netip.MustParsePrefix(DefaultPodCIDR).Contains(ip) || ip.String() == "10.88.0.1" {
		t.Errorf("sandbox IP %q: want an address of %s other than the gateway", sb.Status.Network.GetIp(), DefaultPodCIDR)
	}
	if ob.Status.Network.GetIp() == sb.Status.Network.GetIp() {
		t.Errorf("two sandboxes share IP %s", ip)
	}
	if got := sb.Status.GetLinux().GetNamespaces().GetOptions().GetNetwork(); got != runtimeapi.NamespaceMode_POD {
		t.Errorf("network namespace %v, want POD (else the kubelet recreates the sandbox)", got)
	}

	// The kubelet pulls, then creates the container with the image ref.
	ref, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "nginx:1.25"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(logDir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: ref},
		LogPath:  filepath.Join("app", "0.log"),
		Labels:   map[string]string{"io.kubernetes.container.name": "app"},
	}
	if _, err := rs.CreateContainer(ctx, id, &runtimeapi.ContainerConfig{
		Metadata: cfg.Metadata, Image: &runtimeapi.ImageSpec{Image: "never-pulled:1"},
	}, sandboxConfig("web", logDir)); err == nil {
		t.Error("a container was created from an image that is not present")
	}
	cid, err := rs.CreateContainer(ctx, id, cfg, sandboxConfig("web", logDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.StartContainer(ctx, cid); err != nil {
		t.Fatal(err)
	}
	if err := rs.StartContainer(ctx, cid); err == nil {
		t.Error("a running container was started again")
	}
	cs, err := rs.ContainerStatus(ctx, cid, false)
	if err != nil {
		t.Fatal(err)
	}
	st := cs.Status
	if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING || st.StartedAt == 0 || st.ImageRef != ref ||
		st.Image.GetImage() != "nginx:1.25" || st.LogPath != filepath.Join(logDir, "app", "0.log") {
		t.Errorf("container status %+v", st)
	}
	if _, err := os.Stat(st.LogPath); err != nil {
		t.Errorf("the running container has no log file: %v", err)
	}
	running, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	})
	if err != nil || len(running) != 1 || running[0].Id != cid || running[0].PodSandboxId != id {
		t.Errorf("running containers %v, %v", running, err)
	}
	stats, err := rs.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{PodSandboxId: id})
	if err != nil || len(stats) != 1 || stats[0].Attributes.Id != cid || stats[0].Memory == nil {
		t.Errorf("container stats %v, %v", stats, err)
	}

	// Stopping the sandbox stops its containers; stopping twice is fine.
	for i := 0; i < 2; i++ {
		if err := rs.StopPodSandbox(ctx, id); err != nil {
			t.Fatalf("StopPodSandbox #%d: %v", i+1, err)
		}
	}
	cs, _ = rs.ContainerStatus(ctx, cid, false)
	if cs.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || cs.Status.FinishedAt == 0 {
		t.Errorf("after StopPodSandbox the container is %v", cs.GetStatus().GetState())
	}
	sb, _ = rs.PodSandboxStatus(ctx, id, false)
	if sb.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("after StopPodSandbox the sandbox is %v", sb.GetStatus().GetState())
	}

	// Removal takes the containers with it, for good.
	if err := rs.RemovePodSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.PodSandboxStatus(ctx, id, false); !crierrors.IsNotFound(err) {
		t.Errorf("status of a removed sandbox: %v, want NotFound", err)
	}
	if _, err := rs.ContainerStatus(ctx, cid, false); !crierrors.IsNotFound(err) {
		t.Errorf("status of a removed sandbox's container: %v, want NotFound", err)
	}
	items, err := rs.ListPodSandbox(ctx, nil)
	if err != nil || len(items) != 1 || items[0].Id != other {
		t.Errorf("sandboxes left: %v, %v; want only the other one", items, err)
	}
	if err := rs.StopPodSandbox(ctx, id); err != nil {
		t.Errorf("stopping a removed sandbox: %v", err)
	}
	if err := rs.RemovePodSandbox(ctx, id); err != nil {
		t.Errorf("removing a removed sandbox: %v", err)
	}
}

// Host network pods share the node's namespace; the kubelet recreates a
// sandbox whose mode differs from the pod's.
func TestHostNetworkSandboxes(t *testing.T) {
	rs, _ := kubeletClients(t, Options{})
	ctx := context.Background()
	linux := sandboxConfig("linux-host", testdir.New(t, "fakecri-"))
	linux.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
	}}
	windows := sandboxConfig("hostprocess", testdir.New(t, "fakecri-"))
	windows.Windows = &runtimeapi.WindowsPodSandboxConfig{SecurityContext: &runtimeapi.WindowsSandboxSecurityContext{HostProcess: true}}
	for _, cfg := range []*runtimeapi.PodSandboxConfig{linux, windows} {
		id, err := rs.RunPodSandbox(ctx, cfg, "")
		if err != nil {
			t.Fatal(err)
		}
		sb, err := rs.PodSandboxStatus(ctx, id, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := sb.Status.GetLinux().GetNamespaces().GetOptions().GetNetwork(); got != runtimeapi.NamespaceMode_NODE {
			t.Errorf("%s: network namespace %v, want NODE", cfg.Metadata.Name, got)
		}
		if sb.Status.Network.GetIp() != "" {
			t.Errorf("%s: a host network sandbox got pod IP %s", cfg.Metadata.Name, sb.Status.Network.GetIp())
		}
	}
}

func TestPodCIDRRunsOut(t *testing.T) {
	rs, _ := kubeletClients(t, Options{PodCIDR: "192.168.50.0/29"})
	ctx := context.Background()
	var ips []string
	for i := 0; ; i++ {
		id, err := rs.RunPodSandbox(ctx, sandboxConfig("p"+string(rune('a'+i)), testdir.New(t, "fakecri-")), "")
		if err != nil {
			if status.Code(err) != codes.ResourceExhausted {
				t.Errorf("error %v, want ResourceExhausted", err)
			}
			break
		}
		sb, _ := rs.PodSandboxStatus(ctx, id, false)
		ips = append(ips, sb.GetStatus().GetNetwork().GetIp())
		if i > 10 {
			t.Fatal("a /29 handed out more than 10 addresses")
		}
	}
	// .0 is the network, .1 the gateway, .7 the broadcast address.
	if got := strings.Join(ips, " "); got != "192.168.50.2 192.168.50.3 192.168.50.4 192.168.50.5 192.168.50.6" {
		t.Errorf("addresses %s", got)
	}
}

// Over TCP with a plain gRPC client, as a test or a tool outside the
// kubelet would connect.
func TestServesTCP(t *testing.T) {
	conn := tcpClient(t, Options{Images: []string{pause}, ImageSize: 1 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := runtimeapi.NewRuntimeServiceClient(conn).Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != RuntimeName {
		t.Fatalf("Version: %v, %v", v, err)
	}
	imgs, err := runtimeapi.NewImageServiceClient(conn).ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(imgs.Images) != 1 || imgs.Images[0].RepoTags[0] != pause || imgs.Images[0].Size_ != 1<<20 {
		t.Fatalf("ListImages: %v, %v", imgs, err)
	}
	_, err = runtimeapi.NewRuntimeServiceClient(conn).ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: "x", Cmd: []string{"echo"}})
	if status.Code(err) != codes.NotFound {
		t.Errorf("ExecSync in a container that does not exist: %v, want NotFound", err)
	}
}

func TestCallLog(t *testing.T) {
	calls := make(chan string, 10)
	conn := tcpClient(t, Options{CallLog: func(method string, err error) {
		if err == nil {
			calls <- method
		}
	}})
	if _, err := runtimeapi.NewImageServiceClient(conn).ImageFsInfo(context.Background(), &runtimeapi.ImageFsInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := <-calls; got != "/runtime.v1.ImageService/ImageFsInfo" {
		t.Errorf("logged %q", got)
	}
}

func TestListenRefusesOtherEndpoints(t *testing.T) {
	for endpoint, want := range map[string]string{
		"http://127.0.0.1:80":             "want npipe://./pipe/NAME, tcp://HOST:PORT or unix:///PATH",
		"npipe://server/pipe/containerd":  "want npipe://./pipe/NAME",
		"npipe://./containerd-containerd": "want npipe://./pipe/NAME",
		"npipe://./pipe/":                 "want npipe://./pipe/NAME",
	} {
		if _, err := Listen(endpoint); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Listen(%q): %v, want an error with %q", endpoint, err, want)
		}
	}
	if runtime.GOOS != "windows" {
		if _, err := Listen(DefaultEndpoint); err == nil || !strings.Contains(err.Error(), "Windows only") {
			t.Errorf("Listen(%q) outside Windows: %v", DefaultEndpoint, err)
		}
	}
	if _, err := New(Options{PodCIDR: "10.88.0.0"}); err == nil {
		t.Error("New accepted a pod CIDR without a prefix length")
	}
}

// A test reads back which container was stopped with which grace period,
// and what ran in it first: the kubelet runs a preStop exec hook with
// ExecSync, then stops the container with what is left of the grace.
func TestActionsRecordStopsAndExecs(t *testing.T) {
	var got told
	rs, is := kubeletClients(t, Options{Actions: record[Action](&got)})
	ctx := context.Background()
	cid := runPod(t, rs, is, "shop").start(t, "app")
	if _, _, err := rs.ExecSync(ctx, cid, []string{CmdEcho, "bye"}, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := rs.StopContainer(ctx, cid, 18); err != nil {
		t.Fatal(err)
	}
	// A second stop of the stopped container is no action.
	if err := rs.StopContainer(ctx, cid, 18); err != nil {
		t.Fatal(err)
	}
	got.want(t, "actions",
		`PullImage image=`+pause+` user=`,
		`ExecSync pod=shop/web container=app timeout=20s command="echo bye"`,
		`StopContainer pod=shop/web container=app timeout=18s`)
}

// A test reads back which pod each sandbox and container call was about,
// and the IDs the runtime gave them; calls that failed, and calls on
// nothing of a pod, are not told.
func TestPodCallsNameThePod(t *testing.T) {
	var got told
	rs, is := kubeletClients(t, Options{PodCalls: record[PodCall](&got)})
	ctx := context.Background()
	pod := runPod(t, rs, is, "shop")
	id, cid := pod.id, pod.start(t, "app")
	if _, err := rs.PodSandboxStatus(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.ContainerStatus(ctx, cid, false); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.ContainerStatus(ctx, "no-such-container", false); err == nil {
		t.Fatal("ContainerStatus of a container that does not exist succeeded")
	}
	if _, err := rs.ListContainers(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := rs.StopContainer(ctx, cid, 10); err != nil {
		t.Fatal(err)
	}
	if err := rs.StopPodSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	got.want(t, "pod calls",
		"RunPodSandbox pod=shop/web sandbox="+id,
		"CreateContainer pod=shop/web container=app id="+cid,
		"StartContainer pod=shop/web container=app id="+cid,
		"PodSandboxStatus pod=shop/web sandbox="+id,
		"ContainerStatus pod=shop/web container=app id="+cid,
		"StopContainer pod=shop/web container=app id="+cid,
		"StopPodSandbox pod=shop/web sandbox="+id)
}

// A container whose command is `onstop N` ends with N when the runtime
// stops it, as a process its stop signal ends; others end with 0.
func TestOnStopSetsTheExitCodeOfAStop(t *testing.T) {
	rs, is := kubeletClients(t, Options{})
	ctx := context.Background()
	pod := runPod(t, rs, is, "default")
	for _, tc := range []struct {
		command    []string
		wantCode   int32
		wantReason string
	}{
		{[]string{CmdOnStop, "143"}, 143, "Error"},
		{[]string{CmdEcho, "hi"}, 0, "Completed"},
	} {
		cid := pod.start(t, tc.command[0], tc.command...)
		if err := rs.StopContainer(ctx, cid, 10); err != nil {
			t.Fatal(err)
		}
		st, err := rs.ContainerStatus(ctx, cid, false)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.Status.ExitCode != tc.wantCode || st.Status.Reason != tc.wantReason {
			t.Errorf("%q after a stop: %v, exit %d (%s); want exited with %d (%s)",
				tc.command, st.Status.State, st.Status.ExitCode, st.Status.Reason, tc.wantCode, tc.wantReason)
		}
	}
}

// An image of FailPulls fails to pull as a registry without it makes the
// pull fail, and is not present afterwards; others pull as before.
func TestFailPullsFailsOnlyThoseImages(t *testing.T) {
	const missing = "registry.example.com/missing:1"
	_, is := kubeletClients(t, Options{FailPulls: []string{missing}})
	ctx := context.Background()
	if _, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: missing}, nil, nil); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Fatalf("pull of %s: %v, want NotFound", missing, err)
	}
	if st, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: missing}, false); err != nil || st.Image != nil {
		t.Fatalf("after the failed pull: %v, %v", st.GetImage(), err)
	}
	if _, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: pause}, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// A container whose main process takes time to exit after its stop
// signal (`onstop CODE DURATION`) keeps the stop waiting that long when
// the grace period allows it, and ends with its own code; a grace period
// that ends sooner kills it. Either way the actions say how it ended.
func TestStopWaitsForTheContainerUpToItsGracePeriod(t *testing.T) {
	var got told
	rs, is := kubeletClients(t, Options{Actions: record[Action](&got)})
	ctx := context.Background()
	pod := runPod(t, rs, is, "default")
	for _, tc := range []struct {
		name       string
		takes      string
		grace      int64
		wantCode   int32
		wantAction string
		min, max   time.Duration
	}{
		{"exits within its grace", "2s", 10, 1, "Exited pod=default/web container=exits within its grace code=1 after=2s", 2 * time.Second, 8 * time.Second},
		{"killed at the end of its grace", "30s", 1, ExitKilled, "Killed pod=default/web container=killed at the end of its grace code=137 after=1s", time.Second, 8 * time.Second},
	} {
		cid := pod.start(t, tc.name, CmdOnStop, "1", tc.takes)
		got.reset()
		began := time.Now()
		if err := rs.StopContainer(ctx, cid, tc.grace); err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		if took < tc.min || took > tc.max {
			t.Errorf("%s: StopContainer returned after %v, want %v to %v", tc.name, took, tc.min, tc.max)
		}
		st, err := rs.ContainerStatus(ctx, cid, false)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.Status.ExitCode != tc.wantCode {
			t.Errorf("%s: %v, exit %d; want exited with %d", tc.name, st.Status.State, st.Status.ExitCode, tc.wantCode)
		}
		got.want(t, tc.name+": actions", fmt.Sprintf("StopContainer pod=default/web container=%s timeout=%ds", tc.name, tc.grace), tc.wantAction)
	}
}

// An image of a registry that needs credentials pulls only with them, as
// the pull request's username and password or as its auth; the pull
// action names the user it came with, never the password.
func TestPullNeedsTheRegistrysCredentials(t *testing.T) {
	const private = "registry.example.com/line/app:1"
	var got told
	_, is := kubeletClients(t, Options{
		Registries: map[string]Credential{"registry.example.com": {Username: "robot", Password: "pw"}},
		Actions:    record[Action](&got),
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		auth *runtimeapi.AuthConfig
		want string
	}{
		{"none", nil, "401 Unauthorized (no credentials)"},
		{"wrong password", &runtimeapi.AuthConfig{Username: "robot", Password: "guess"}, `401 Unauthorized (user "robot")`},
		{"another user", &runtimeapi.AuthConfig{Auth: base64.StdEncoding.EncodeToString([]byte("intruder:pw"))}, `401 Unauthorized (user "intruder")`},
	} {
		_, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: private}, tc.auth, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "guess") {
			t.Errorf("pull with %s credentials: %v; want a refusal with %q and no password", tc.name, err, tc.want)
		}
	}
	if st, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: private}, false); err != nil || st.Image != nil {
		t.Fatalf("after the refused pulls: %v, %v", st.GetImage(), err)
	}
	for _, auth := range []*runtimeapi.AuthConfig{
		{Username: "robot", Password: "pw"},
		{Auth: base64.StdEncoding.EncodeToString([]byte("robot:pw"))},
	} {
		if _, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: private}, auth, nil); err != nil {
			t.Errorf("pull with the registry's credentials %+v: %v", auth, err)
		}
	}
	// Other registries need none.
	if _, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: pause}, nil, nil); err != nil {
		t.Fatal(err)
	}
	got.want(t, "actions",
		"PullImage image="+private+" user=",
		"PullImage image="+private+" user=robot",
		"PullImage image="+private+" user=intruder",
		"PullImage image="+private+" user=robot",
		"PullImage image="+private+" user=robot",
		"PullImage image="+pause+" user=")
}
