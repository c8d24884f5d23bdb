//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	utilexec "k8s.io/utils/exec"

	"github.com/kubeedge-windows/edgecore/test/fakecri"
)

// cloudStream's fixed ports, as an operator's cloudcore has them, and
// edged's own kubelet port. Once a node's tunnel connects, cloudcore
// advertises another kubelet port in the node's status (one it negotiates
// per cloudcore, 10351 and up), and its iptables manager sends the API
// server's connections to <node IP>:<that port> to the stream port.
var (
	streamPort = 10003 + portOffset
	tunnelPort = 10004 + portOffset
)

const kubeletPort = 10350

// forwarder stands in for cloudcore's iptables rule: connections to the
// node's IP on the kubelet port go to cloudStream's stream port. edged
// serves its kubelet on 127.0.0.1 only, so the API server can reach the
// node through nothing else.
type forwarder struct {
	l     net.Listener
	conns atomic.Int64
}

func startForwarder(t *testing.T, from, to string) *forwarder {
	t.Helper()
	l, err := net.Listen("tcp", from)
	if err != nil {
		fatalf(t, "the stand-in for cloudcore's iptables rule cannot listen on %s: %v", from, err)
	}
	f := &forwarder{l: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(out, in); done <- struct{}{} }()
				go func() { io.Copy(in, out); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return f
}

// forwardKubelet starts the stand-in for cloudcore's rule for node e: from
// its node IP on the kubelet port cloudcore advertises for it, once its
// tunnel is connected, to cloudcore's stream port.
func (c *cluster) forwardKubelet(t *testing.T, e *edge) *forwarder {
	t.Helper()
	var port int32
	eventually(t, readyBound, "cloudcore advertising the tunnel's kubelet port for "+e.name, func() (bool, error) {
		n, err := c.client.CoreV1().Nodes().Get(context.Background(), e.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		port = n.Status.DaemonEndpoints.KubeletEndpoint.Port
		return port != 0 && port != kubeletPort, fmt.Errorf("kubelet port %d", port)
	})
	t.Logf("node %s: the API server reaches it at %s:%d, forwarded to cloudcore's %d", e.name, e.nodeIP, port, streamPort)
	return startForwarder(t, net.JoinHostPort(e.nodeIP, strconv.Itoa(int(port))), "127.0.0.1:"+strconv.Itoa(streamPort))
}

// shellPod asks for a pod whose container runs the fake runtime's echo: one
// line in its log at start.
func (e *edge) shellPod(t *testing.T, c *cluster, name string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:     e.name,
			NodeSelector: map[string]string{"kubernetes.io/os": e.os},
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10.2",
				Command: []string{fakecri.CmdEcho, "first", "line"}, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	if _, err := c.client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		fatal(t, err)
	}
}

// logs is `kubectl logs` of the pod's container.
func (c *cluster) logs(pod string, opts corev1.PodLogOptions) (string, error) {
	opts.Container = "app"
	b, err := c.client.CoreV1().Pods("default").GetLogs(pod, &opts).DoRaw(context.Background())
	return string(b), err
}

// exec is `kubectl exec` (attach when attach is set) into the pod's
// container, with client-go's SPDY executor as kubectl uses it.
func (c *cluster) exec(ctx context.Context, pod string, cmd []string, stdin io.Reader, attach bool) (string, string, error) {
	return c.execIn(ctx, "default", pod, cmd, stdin, attach)
}

// execIn is exec into a pod of namespace ns.
func (c *cluster) execIn(ctx context.Context, ns, pod string, cmd []string, stdin io.Reader, attach bool) (string, string, error) {
	req := c.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod)
	if attach {
		req = req.SubResource("attach").VersionedParams(&corev1.PodAttachOptions{Container: "app", Stdin: stdin != nil, Stdout: true}, scheme.ParameterCodec)
	} else {
		req = req.SubResource("exec").VersionedParams(&corev1.PodExecOptions{Container: "app", Command: cmd,
			Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	}
	ex, err := remotecommand.NewSPDYExecutor(c.rest, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var out, errOut bytes.Buffer
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: &out}
	if !attach {
		opts.Stderr = &errOut
	}
	err = ex.StreamWithContext(ctx, opts)
	return out.String(), errOut.String(), err
}

// nodeProxy GETs a path of the node's kubelet through the API server.
func (c *cluster) nodeProxy(node, path string) ([]byte, error) {
	return c.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy/" + path).DoRaw(context.Background())
}

// followLines reads a `logs --follow` stream line by line into a channel;
// the channel's last value is the error that ended the stream.
type followed struct {
	line string
	err  error
}

func (c *cluster) follow(ctx context.Context, t *testing.T, pod string) <-chan followed {
	t.Helper()
	r, err := c.client.CoreV1().Pods("default").GetLogs(pod, &corev1.PodLogOptions{Container: "app", Follow: true}).Stream(ctx)
	if err != nil {
		fatalf(t, "logs --follow %s: %v", pod, err)
	}
	ch := make(chan followed, 100)
	go func() {
		defer r.Close()
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				ch <- followed{err: err}
				close(ch)
				return
			}
			ch <- followed{line: strings.TrimSuffix(line, "\n")}
		}
	}()
	return ch
}

// nextLine waits for the followed stream's next line, within bound.
func nextLine(t *testing.T, ch <-chan followed, bound time.Duration) string {
	t.Helper()
	select {
	case f, ok := <-ch:
		if !ok || f.err != nil {
			fatalf(t, "logs --follow ended before its next line: %v", f.err)
		}
		return f.line
	case <-time.After(bound):
		fatalf(t, "logs --follow gave no line within %v", bound)
	}
	return ""
}

// streamChecks looks into a pod of the edge through cloudcore's tunnel, as
// an operator does with kubectl: logs (with --follow, --tail and
// --previous), exec, attach, and the kubelet's stats and resource metrics.
// It returns the round-trip times of one logs and one exec call.
func (c *cluster) streamChecks(t *testing.T, e *edge, fwd *forwarder) (logsRTT, execRTT time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const pod = "shell"
	e.shellPod(t, c, pod)
	eventually(t, podBound, "pod "+pod+" Running", c.podRunning(pod))
	before := fwd.conns.Load()

	var got string
	eventually(t, time.Minute, "kubectl logs "+pod, func() (bool, error) {
		var err error
		got, err = c.logs(pod, corev1.PodLogOptions{})
		return got == "first line\n", fmt.Errorf("%q, %v", got, err)
	})
	begin := time.Now()
	if got, err := c.logs(pod, corev1.PodLogOptions{}); err != nil || got != "first line\n" {
		fatalf(t, "logs: %q, %v", got, err)
	}
	logsRTT = time.Since(begin)

	begin = time.Now()
	out, _, err := c.exec(ctx, pod, []string{fakecri.CmdEcho, "hello", "through", "the", "tunnel"}, nil, false)
	execRTT = time.Since(begin)
	if err != nil || out != "hello through the tunnel\n" {
		fatalf(t, "exec echo: %q, %v", out, err)
	}
	_, _, err = c.exec(ctx, pod, []string{fakecri.CmdExit, "3"}, nil, false)
	var exitErr utilexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 {
		errorf(t, "exec exit 3: %v, want the exit code 3", err)
	}
	out, errOut, err := c.exec(ctx, pod, []string{"ls"}, nil, false)
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != fakecri.ExitCommandNotFound || !strings.Contains(errOut, "command not found") {
		errorf(t, "exec of an unknown command: %q %q %v", out, errOut, err)
	}
	out, _, err = c.exec(ctx, pod, nil, strings.NewReader("stdin line 1\nstdin line 2\n"), true)
	if err != nil || out != "stdin line 1\nstdin line 2\n" {
		errorf(t, "attach: %q, %v; want stdin back", out, err)
	}
	t.Logf("%s: exec echo, exit code 3, an unknown command and attach went through cloudcore's tunnel", pod)
	nothingAnswersLocalCallers(t, e)

	// --follow sees what the container prints while it reads.
	fctx, stopFollow := context.WithCancel(ctx)
	lines := c.follow(fctx, t, pod)
	if l := nextLine(t, lines, time.Minute); l != "first line" {
		errorf(t, "logs --follow first line %q", l)
	}
	if _, _, err := c.exec(ctx, pod, []string{fakecri.CmdLog, "second", "line"}, nil, false); err != nil {
		fatal(t, err)
	}
	if l := nextLine(t, lines, time.Minute); l != "second line" {
		errorf(t, "logs --follow next line %q, want the one printed meanwhile", l)
	}
	stopFollow()
	tail := int64(1)
	if got, err := c.logs(pod, corev1.PodLogOptions{TailLines: &tail}); err != nil || got != "second line\n" {
		errorf(t, "logs --tail 1: %q, %v", got, err)
	}

	c.statsChecks(t, e, pod)

	// --previous reads the container that ended before the restart.
	if _, _, err := c.exec(ctx, pod, []string{fakecri.CmdStop, "1"}, nil, false); err != nil {
		fatal(t, err)
	}
	eventually(t, podBound, pod+" restarted after its container ended", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].State.Running != nil, fmt.Errorf("container statuses %v", cs)
	})
	if got, err := c.logs(pod, corev1.PodLogOptions{Previous: true}); err != nil || got != "first line\nsecond line\n" {
		errorf(t, "logs --previous: %q, %v", got, err)
	}
	if got, err := c.logs(pod, corev1.PodLogOptions{}); err != nil || got != "first line\n" {
		errorf(t, "logs after the restart: %q, %v", got, err)
	}
	if fwd.conns.Load() == before {
		errorl(t, "the API server reached the node without the stand-in for cloudcore's iptables rule")
	}
	t.Logf("%s: logs, --follow, --tail and --previous went through cloudcore's tunnel (%d connections)", pod, fwd.conns.Load()-before)
	return logsRTT, execRTT
}

// statsChecks reads the kubelet's summary and resource metrics through the
// tunnel: the pod's numbers are the fake runtime's, and the node's own CPU
// and memory are measured (on Windows from the performance counters).
func (c *cluster) statsChecks(t *testing.T, e *edge, pod string) {
	t.Helper()
	var ps *statsapi.PodStats
	var sum statsapi.Summary
	eventually(t, 2*time.Minute, "stats/summary with "+pod, func() (bool, error) {
		body, err := c.nodeProxy(e.name, "stats/summary")
		if err != nil {
			return false, err
		}
		sum = statsapi.Summary{}
		if err := json.Unmarshal(body, &sum); err != nil {
			return false, err
		}
		for i := range sum.Pods {
			if sum.Pods[i].PodRef.Name == pod && len(sum.Pods[i].Containers) == 1 {
				ps = &sum.Pods[i]
				cs := ps.Containers[0]
				if cs.CPU == nil || cs.CPU.UsageCoreNanoSeconds == nil || cs.Memory == nil || cs.Memory.WorkingSetBytes == nil {
					return false, fmt.Errorf("no container stats of %s yet", pod)
				}
				// The node's own figures come from the kubelet's first
				// sample of the host's counters, taken a few seconds after
				// it starts: a node Ready half a second after a restart
				// may not have one yet. A sample has its time.
				n := sum.Node
				if n.CPU == nil || n.CPU.Time.IsZero() || n.Memory == nil || n.Memory.Time.IsZero() {
					return false, fmt.Errorf("no sample of the node's own CPU and memory yet: CPU %+v, memory %+v", n.CPU, n.Memory)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("no stats of %s yet among %d pods", pod, len(sum.Pods))
	})
	cs := ps.Containers[0]
	if *cs.CPU.UsageCoreNanoSeconds != fakecri.ContainerCPUUsageCoreNanoSeconds || *cs.Memory.WorkingSetBytes != fakecri.ContainerMemoryWorkingSetBytes {
		errorf(t, "container stats: CPU %d ns, working set %d bytes; want the fake runtime's %d and %d",
			*cs.CPU.UsageCoreNanoSeconds, *cs.Memory.WorkingSetBytes, fakecri.ContainerCPUUsageCoreNanoSeconds, fakecri.ContainerMemoryWorkingSetBytes)
	}
	if e.os == "windows" {
		// The pod's own figures come from the sandbox's Windows stats.
		if ps.CPU == nil || ps.CPU.UsageNanoCores == nil || *ps.CPU.UsageNanoCores != fakecri.ContainerCPUUsageNanoCores ||
			ps.Memory == nil || ps.Memory.WorkingSetBytes == nil || *ps.Memory.WorkingSetBytes != fakecri.ContainerMemoryWorkingSetBytes ||
			ps.Network == nil || ps.Network.RxBytes == nil || *ps.Network.RxBytes != fakecri.SandboxNetworkRxBytes ||
			ps.Network.TxBytes == nil || *ps.Network.TxBytes != fakecri.SandboxNetworkTxBytes {
			errorf(t, "pod stats are not the fake runtime's Windows stats: CPU %+v, memory %+v, network %+v", ps.CPU, ps.Memory, ps.Network)
		}
	}
	// The node's CPU time may stay 0 on a large idle host: the Windows
	// kubelet adds each second's "% Processor Time" as a whole number, so a
	// host below 1% adds nothing. A working set of 0 is always wrong.
	n := sum.Node
	if n.CPU.UsageCoreNanoSeconds == nil || n.Memory.WorkingSetBytes == nil || *n.Memory.WorkingSetBytes == 0 {
		errorf(t, "the node's own CPU and memory are missing or zero: CPU %+v, memory %+v", n.CPU, n.Memory)
	} else {
		t.Logf("stats/summary: node CPU %d ns, working set %d MiB; pod %s from the fake runtime",
			*n.CPU.UsageCoreNanoSeconds, *n.Memory.WorkingSetBytes>>20, pod)
	}

	// /metrics/resource, which metrics-server reads: the container's working
	// set on Linux, the pod's from the sandbox stats on Windows.
	metric := fmt.Sprintf(`container_memory_working_set_bytes{container="app",namespace="default",pod="%s"}`, pod)
	if e.os == "windows" {
		metric = fmt.Sprintf(`pod_memory_working_set_bytes{namespace="default",pod="%s"}`, pod)
	}
	body, err := c.nodeProxy(e.name, "metrics/resource")
	if err != nil {
		fatalf(t, "metrics/resource: %v", err)
	}
	value := -1.0
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == metric {
			value, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	if value != fakecri.ContainerMemoryWorkingSetBytes {
		errorf(t, "metrics/resource %s = %v, want %d\n%s", metric, value, fakecri.ContainerMemoryWorkingSetBytes, body)
	}
	if !strings.Contains(string(body), "node_memory_working_set_bytes") {
		errorf(t, "metrics/resource has no node memory:\n%s", body)
	}
}
