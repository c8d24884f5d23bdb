package fakecri

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// runningContainer starts a sandbox and a container running cmd, with its
// log under a temporary directory, through the kubelet's CRI client.
func runningContainer(t *testing.T, rs internalapi.RuntimeService, cmd ...string) (sandboxID, id, logPath string) {
	t.Helper()
	ctx := context.Background()
	logDir := testdir.New(t, "fakecri-")
	sbCfg := sandboxConfig("shell", logDir)
	sandboxID, err := rs.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(logDir, "sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err = rs.CreateContainer(ctx, sandboxID, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "sh"},
		Image:    &runtimeapi.ImageSpec{Image: pause},
		Command:  cmd[:1],
		Args:     cmd[1:],
		LogPath:  filepath.Join("sh", "0.log"),
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return sandboxID, id, filepath.Join(logDir, "sh", "0.log")
}

// criLine is a line of the CRI log format: time, stream, full or partial,
// then the text.
var criLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z) (stdout|stderr) (F|P) (.*)$`)

// logLines reads a CRI log file as "stream tag text" lines, failing on any
// line that is not in the format.
func logLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if l == "" {
			continue
		}
		m := criLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a CRI log line: %q", l)
		}
		out = append(out, m[3]+" "+m[4]+" "+m[5])
	}
	return out
}

func TestContainerCommandWritesCRILog(t *testing.T) {
	rs, _ := kubeletClients(t, Options{Images: []string{pause}})
	_, id, logPath := runningContainer(t, rs, CmdEcho, "hello", "from", "fakecri")
	if got := logLines(t, logPath); strings.Join(got, "|") != "stdout F hello from fakecri" {
		t.Errorf("log after start: %q", got)
	}
	// log appends to the container's own output; a command outside the set
	// is the exec's failure and leaves the log alone.
	ctx := context.Background()
	if _, _, err := rs.ExecSync(ctx, id, []string{CmdLog, "second", "line"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rs.ExecSync(ctx, id, []string{"ping", "localhost"}, 0); err == nil {
		t.Error("an unknown command succeeded")
	}
	want := "stdout F hello from fakecri|stdout F second line"
	if got := logLines(t, logPath); strings.Join(got, "|") != want {
		t.Errorf("log\n got %q\nwant %q", got, want)
	}
	// A write without a newline is a partial line.
	c := logWriter{mu: new(sync.Mutex), path: logPath, stream: "stderr"}
	if _, err := c.Write([]byte("no newline")); err != nil {
		t.Fatal(err)
	}
	if got := logLines(t, logPath); got[len(got)-1] != "stderr P no newline" {
		t.Errorf("partial line: %q", got)
	}
}

// A container whose command the fake does not know runs and prints nothing,
// as before the command set.
func TestUnknownContainerCommandRunsSilently(t *testing.T) {
	rs, _ := kubeletClients(t, Options{Images: []string{pause}})
	_, id, logPath := runningContainer(t, rs, "cmd", "/c", "ping", "-t", "localhost")
	st, err := rs.ContainerStatus(context.Background(), id, false)
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("status %v, %v", st, err)
	}
	if got := logLines(t, logPath); len(got) != 0 {
		t.Errorf("log %q", got)
	}
}

func TestExecSync(t *testing.T) {
	rs, _ := kubeletClients(t, Options{Images: []string{pause}})
	_, id, _ := runningContainer(t, rs, CmdEcho, "up")
	ctx := context.Background()
	for _, tc := range []struct {
		cmd            []string
		stdout, stderr string
		code           int
	}{
		{[]string{CmdEcho, "a", "b"}, "a b\n", "", 0},
		{[]string{CmdExit, "3"}, "", "", 3},
		{[]string{CmdExit, "three"}, "", `exit: "three" is not an exit code (0-255)` + "\n", 2},
		{[]string{CmdCat}, "", "", 0},
		{[]string{"ls"}, "", "ls: command not found (the fake runs echo, exit, cat, log, stop, onstop)\n", ExitCommandNotFound},
	} {
		stdout, stderr, err := rs.ExecSync(ctx, id, tc.cmd, 0)
		code := 0
		var exitErr utilexec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitStatus()
		} else if err != nil {
			t.Fatalf("%q: %v", tc.cmd, err)
		}
		if string(stdout) != tc.stdout || string(stderr) != tc.stderr || code != tc.code {
			t.Errorf("%q: stdout %q stderr %q code %d; want %q %q %d", tc.cmd, stdout, stderr, code, tc.stdout, tc.stderr, tc.code)
		}
	}
}

// stream connects to a streaming URL the runtime returned, as the kubelet's
// proxy does, with client-go's SPDY executor.
func stream(t *testing.T, rawURL string, opts remotecommand.StreamOptions) error {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: u.Scheme + "://" + u.Host}, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	return exec.StreamWithContext(context.Background(), opts)
}

func TestExecAndAttachThroughTheStreamingServer(t *testing.T) {
	rs, _ := kubeletClients(t, Options{Images: []string{pause}})
	_, id, logPath := runningContainer(t, rs, CmdEcho, "up")

	resp, err := rs.Exec(context.Background(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{CmdEcho, "hi", "there"}, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := stream(t, resp.Url, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil || out.String() != "hi there\n" {
		t.Errorf("exec echo: %q %q, %v", out.String(), errOut.String(), err)
	}

	resp, err = rs.Exec(context.Background(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{CmdExit, "7"}, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	err = stream(t, resp.Url, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	var exitErr utilexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 7 {
		t.Errorf("exec exit 7: %v, want exit code 7", err)
	}

	resp, err = rs.Exec(context.Background(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{CmdCat}, Stdin: true, Stdout: true})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := stream(t, resp.Url, remotecommand.StreamOptions{Stdin: strings.NewReader("piped\n"), Stdout: &out}); err != nil || out.String() != "piped\n" {
		t.Errorf("exec cat: %q, %v", out.String(), err)
	}

	// Attach: the main process echoes standard input until it ends.
	att, err := rs.Attach(context.Background(), &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := stream(t, att.Url, remotecommand.StreamOptions{Stdin: strings.NewReader("ping 1\nping 2\n"), Stdout: &out}); err != nil || out.String() != "ping 1\nping 2\n" {
		t.Errorf("attach: %q, %v", out.String(), err)
	}

	// stop ends the main process with its code; nothing more can be run.
	if _, _, err := rs.ExecSync(context.Background(), id, []string{CmdStop, "4"}, 0); err != nil {
		t.Fatal(err)
	}
	st, err := rs.ContainerStatus(context.Background(), id, false)
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.Status.ExitCode != 4 || st.Status.Reason != "Error" {
		t.Errorf("after stop 4: %+v, %v", st.GetStatus(), err)
	}
	if _, err := rs.Exec(context.Background(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{CmdEcho}, Stdout: true}); err == nil {
		t.Error("exec into a stopped container was given a URL")
	}
	if got := logLines(t, logPath); strings.Join(got, "|") != "stdout F up" {
		t.Errorf("exec output went to the log: %q", got)
	}
}

func TestStatsAreTheKnownNumbers(t *testing.T) {
	rs, _ := kubeletClients(t, Options{Images: []string{pause}, ImageFsDir: testdir.New(t, "fakecri-")})
	sandboxID, id, _ := runningContainer(t, rs, CmdEcho, "up")
	ctx := context.Background()

	cs, err := rs.ContainerStats(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Cpu.UsageCoreNanoSeconds.Value != ContainerCPUUsageCoreNanoSeconds || cs.Cpu.UsageNanoCores.Value != ContainerCPUUsageNanoCores ||
		cs.Memory.WorkingSetBytes.Value != ContainerMemoryWorkingSetBytes || cs.WritableLayer.UsedBytes.Value != ContainerWritableLayerBytes {
		t.Errorf("container stats %v", cs)
	}
	list, err := rs.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{Id: id})
	if err != nil || len(list) != 1 || list[0].Memory.WorkingSetBytes.Value != ContainerMemoryWorkingSetBytes {
		t.Errorf("ListContainerStats %v, %v", list, err)
	}

	ps, err := rs.PodSandboxStats(ctx, sandboxID)
	if err != nil {
		t.Fatal(err)
	}
	w := ps.GetWindows()
	if ps.Attributes.Id != sandboxID || w.Cpu.UsageNanoCores.Value != ContainerCPUUsageNanoCores ||
		w.Memory.WorkingSetBytes.Value != ContainerMemoryWorkingSetBytes || w.Process.ProcessCount.Value != SandboxProcessesPerContainer ||
		w.Network.DefaultInterface.Name != SandboxNetworkInterface || w.Network.DefaultInterface.RxBytes.Value != SandboxNetworkRxBytes ||
		w.Network.DefaultInterface.TxBytes.Value != SandboxNetworkTxBytes ||
		len(w.Containers) != 1 || w.Containers[0].Attributes.Id != id || w.Containers[0].Memory.WorkingSetBytes.Value != ContainerMemoryWorkingSetBytes {
		t.Errorf("sandbox stats %v", ps)
	}
	all, err := rs.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{LabelSelector: map[string]string{"io.kubernetes.pod.name": "shell"}})
	if err != nil || len(all) != 1 || all[0].Attributes.Id != sandboxID {
		t.Errorf("ListPodSandboxStats %v, %v", all, err)
	}
	if none, err := rs.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{Id: "other"}); err != nil || len(none) != 0 {
		t.Errorf("ListPodSandboxStats of another sandbox %v, %v", none, err)
	}

	// A stopped container no longer counts towards its sandbox.
	if _, _, err := rs.ExecSync(ctx, id, []string{CmdStop, "0"}, 0); err != nil {
		t.Fatal(err)
	}
	ps, err = rs.PodSandboxStats(ctx, sandboxID)
	if err != nil || ps.Windows.Cpu.UsageNanoCores.Value != 0 || len(ps.Windows.Containers) != 0 {
		t.Errorf("sandbox stats after stop %v, %v", ps, err)
	}
}
