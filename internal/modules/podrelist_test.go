package modules

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeedge/beehive/pkg/core/model"

	"github.com/kubeedge-windows/edgecore/internal/reconnect"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// The list of a cloud that lost two messages: the pod "deleting" was
// created and deleted while cloudcore was down (the node never heard of
// it); the pod "gone" was deleted while the node was away.
const lostMessagesList = `{"metadata":{"resourceVersion":"150"},"items":[` +
	`{"metadata":{"namespace":"line3","name":"kept","uid":"u-kept","resourceVersion":"100"},"spec":{"nodeName":"ipc-7"}},` +
	`{"metadata":{"namespace":"line3","name":"deleting","uid":"u-del","resourceVersion":"120","deletionTimestamp":"2026-11-28T08:00:00Z"},"spec":{"nodeName":"ipc-7"}},` +
	// Not the node's, whatever the answer says: never handed over.
	`{"metadata":{"namespace":"line3","name":"elsewhere","uid":"u-else","resourceVersion":"130"},"spec":{"nodeName":"ipc-8"}}]}`

func nodePods(t *testing.T) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	for _, s := range []string{
		`{"metadata":{"namespace":"line3","name":"kept","uid":"u-kept","resourceVersion":"100"},"spec":{"nodeName":"ipc-7"}}`,
		`{"metadata":{"namespace":"line3","name":"gone","uid":"u-gone","resourceVersion":"40"},"spec":{"nodeName":"ipc-7"}}`,
	} {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	return pods
}

// handed renders a message as metamanager sees it: who from, what, which
// pod (with its UID and version) and whether it is being deleted.
func handed(t *testing.T, m model.Message) string {
	t.Helper()
	data, err := m.GetContentData()
	if err != nil {
		t.Fatal(err)
	}
	var p corev1.Pod
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	s := m.GetSource() + " " + m.GetGroup() + " " + m.GetOperation() + " " + m.GetResource() + " uid=" + string(p.UID) + " rv=" + m.GetResourceVersion()
	if p.DeletionTimestamp != nil {
		s += " deleting"
	}
	return s
}

func TestPodRelisterHandsMetamanagerWhatTheCloudsListShows(t *testing.T) {
	c := &cloud{lists: map[string]string{podsKey: lostMessagesList}}
	var got []string
	r := &podRelister{node: "ipc-7", send: c.send, connected: func() bool { return true },
		local: func() ([]corev1.Pod, error) { return nodePods(t), nil },
		hand:  func(m model.Message) { got = append(got, handed(t, m)) }}
	if err := r.relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "list /core/v1/pods/null/null by ipc-7 where spec.nodeName=ipc-7"; strings.Join(c.asked, ", ") != want {
		t.Errorf("asked %q, want %q", c.asked, want)
	}
	// As cloudcore's edgecontroller would have: the delete of the pod the
	// node holds (its UID, which metamanager deletes by), then the update
	// of the deleted pod, which edged hands the kubelet, which confirms
	// the deletion to the cloud.
	want := []string{
		"edgecontroller resource delete line3/pod/gone uid=u-gone rv=40",
		"edgecontroller resource update line3/pod/deleting uid=u-del rv=120 deleting",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("handed metamanager\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A cloud without dynamicController, or that refuses: an error that
	// says what to do, and nothing handed.
	got = nil
	c.err = errors.New("timeout")
	if err := r.relist(context.Background()); !errors.Is(err, errNoDynamicController) || !strings.Contains(err.Error(), "modules.dynamicController.enable: true") {
		t.Errorf("no answer: %v", err)
	}
	c.err, c.reject = nil, "forbidden"
	if err := r.relist(context.Background()); err == nil || !strings.Contains(err.Error(), "cloudcore lists pods with its own account, which needs list on pods") {
		t.Errorf("refused: %v", err)
	}
	c.reject = ""
	r.local = func() ([]corev1.Pod, error) { return nil, errors.New("database is locked") }
	if err := r.relist(context.Background()); err == nil || !strings.Contains(err.Error(), "reading the node's pods: database is locked") {
		t.Errorf("unreadable database: %v", err)
	}
	c.lists[podsKey] = `{"items":[{"metadata":` // cut short
	if err := r.relist(context.Background()); err == nil || !strings.Contains(err.Error(), "the cloud's list of the node's pods") {
		t.Errorf("unreadable list: %v", err)
	}
	if len(got) != 0 {
		t.Errorf("handed metamanager %q after failures", got)
	}
}

// The relister lists when the node connects, not while it is away, and
// again on the next connection.
func TestPodRelisterListsOnEachConnection(t *testing.T) {
	c := &cloud{lists: map[string]string{podsKey: `{"metadata":{"resourceVersion":"1"},"items":[]}`}}
	var up atomic.Bool
	up.Store(true)
	lists := func() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.asked) }
	r := &podRelister{node: "ipc-7", send: c.send, connected: up.Load, poll: time.Millisecond, every: time.Hour,
		local: func() ([]corev1.Pod, error) { return nil, nil }, hand: func(model.Message) {}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.run(ctx) }()
	defer func() { cancel(); wg.Wait() }()
	waitFor := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); lists() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("lists: %d, want %d", lists(), n)
			}
		}
	}
	waitFor(1)
	up.Store(false)
	time.Sleep(50 * time.Millisecond)
	if n := lists(); n != 1 {
		t.Fatalf("lists while connected once and then away: %d, want 1 (every is an hour)", n)
	}
	up.Store(true)
	waitFor(2)
}

// `service status` says why the node cannot list its pods, and stops
// saying it once the node can.
func TestPodRelisterReportsWhyItCannotList(t *testing.T) {
	saved := resubscribeAfter
	resubscribeAfter = []time.Duration{time.Millisecond}
	defer func() { resubscribeAfter = saved }()
	c := &cloud{lists: map[string]string{podsKey: `{"metadata":{"resourceVersion":"1"},"items":[]}`}, err: errors.New("timeout")}
	reports := make(chan string, 100)
	r := &podRelister{node: "ipc-7", send: c.send, connected: func() bool { return true }, poll: time.Millisecond, every: time.Hour,
		local: func() ([]corev1.Pod, error) { return nil, nil }, hand: func(model.Message) {},
		report: func(p string) { reports <- p }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func() string {
		t.Helper()
		select {
		case p := <-reports:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("no report")
			return ""
		}
	}
	if p := next(); !strings.Contains(p, "modules.dynamicController.enable: true") {
		t.Fatalf("the problem reported: %q", p)
	}
	c.mu.Lock()
	c.err = nil
	c.mu.Unlock()
	for p := next(); p != ""; p = next() {
	}
}

func TestHubStatusKeepsThePodsProblemAcrossConnections(t *testing.T) {
	path := filepath.Join(testdir.New(t, "modules-"), reconnect.StatusFile)
	s := &hubStatus{path: path, pid: 42, write: writeFile, now: time.Now}
	read := func() reconnect.Status {
		t.Helper()
		st, ok, err := reconnect.ReadStatus(os.ReadFile, path)
		if err != nil || !ok {
			t.Fatalf("status: %v %v", ok, err)
		}
		return st
	}
	s.recordPods("before any state") // nothing recorded yet: not written
	if _, ok, _ := reconnect.ReadStatus(os.ReadFile, path); ok {
		t.Error("a problem was written before the connection's state")
	}
	s.record(true, "")
	s.recordPods("no dynamicController")
	if st := read(); !st.Connected || st.Pods != "no dynamicController" {
		t.Errorf("after the problem: %+v", st)
	}
	s.record(false, "")
	if st := read(); st.Connected || st.Pods != "no dynamicController" {
		t.Errorf("after a disconnection: %+v", st)
	}
	s.recordPods("")
	if st := read(); st.Pods != "" {
		t.Errorf("after a list: %+v", st)
	}
}
