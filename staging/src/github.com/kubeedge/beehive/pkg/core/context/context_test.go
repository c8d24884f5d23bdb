package context

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubeedge/beehive/pkg/common"
	"github.com/kubeedge/beehive/pkg/core/model"
)

// freshBus gives each test a bus of its own; tests in this package do not run
// in parallel, so swapping the global is safe.
func freshBus(t testing.TB, modules ...string) {
	t.Helper()
	global.Store(newBus())
	InitContext([]string{common.MsgCtxTypeChannel})
	for _, m := range modules {
		AddModule(&common.ModuleInfo{ModuleName: m, ModuleType: common.MsgCtxTypeChannel})
	}
	t.Cleanup(func() { Cancel() })
}

// responder answers every sync message of module until the bus stops.
func responder(module string, answer func(req model.Message) *model.Message) {
	go func() {
		for {
			req, err := Receive(module)
			if err != nil {
				return
			}
			if resp := answer(req); resp != nil {
				SendResp(*resp)
			}
		}
	}()
}

func TestSendReceiveKeepsOrder(t *testing.T) {
	freshBus(t, "edged")
	for i := 0; i < 10; i++ {
		Send("edged", *model.NewMessage("").FillBody(i))
	}
	for i := 0; i < 10; i++ {
		m, err := Receive("edged")
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		if m.GetContent() != i {
			t.Fatalf("message %d carries %v", i, m.GetContent())
		}
	}
}

func TestSendToUnknownModuleIsDropped(t *testing.T) {
	freshBus(t)
	Send("nobody", *model.NewMessage("")) // must neither block nor panic
	if _, err := Receive("nobody"); !errors.Is(err, ErrUnknownModule) {
		t.Fatalf("Receive of unknown module: got %v, want ErrUnknownModule", err)
	}
}

func TestSendSyncDeliversAndReturnsResponse(t *testing.T) {
	freshBus(t, "metamanager")
	responder("metamanager", func(req model.Message) *model.Message {
		if !req.IsSync() {
			return model.NewErrorMessage(&req, "request was not marked sync")
		}
		return req.NewRespByMessage(&req, "pong")
	})
	req := model.NewMessage("").BuildRouter("edged", "meta", "pod", model.QueryOperation).FillBody("ping")
	resp, err := SendSync("metamanager", *req, time.Second)
	if err != nil {
		t.Fatalf("SendSync: %v", err)
	}
	if resp.GetParentID() != req.GetID() || resp.GetContent() != "pong" || resp.GetOperation() != model.ResponseOperation {
		t.Fatalf("unexpected response %s content %v", resp.String(), resp.GetContent())
	}
}

func TestSendSyncResponseTimeout(t *testing.T) {
	freshBus(t, "silent")
	start := time.Now()
	_, err := SendSync("silent", *model.NewMessage(""), 50*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("returned after %v, before the deadline", waited)
	}
	if n := len(cur().waiters); n != 0 {
		t.Fatalf("%d waiters left behind after timeout", n)
	}
}

func TestSendSyncDeliveryTimeoutOnFullInbox(t *testing.T) {
	freshBus(t, "busy")
	for i := 0; i < InboxSize; i++ {
		Send("busy", *model.NewMessage(""))
	}
	_, err := SendSync("busy", *model.NewMessage(""), 50*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
}

func TestSendSyncUnknownModule(t *testing.T) {
	freshBus(t)
	if _, err := SendSync("nobody", *model.NewMessage(""), time.Second); !errors.Is(err, ErrUnknownModule) {
		t.Fatalf("got %v, want ErrUnknownModule", err)
	}
}

func TestSendSyncDefaultTimeout(t *testing.T) {
	if syncTimeout(0) != 30*time.Second || syncTimeout(-time.Second) != 30*time.Second {
		t.Fatal("a timeout <= 0 must mean 30s")
	}
	if syncTimeout(time.Second) != time.Second {
		t.Fatal("a positive timeout must be kept")
	}
}

// A responder that answers before the caller reaches its select must still
// be heard: the waiter exists before the request is delivered.
func TestSendSyncLosesNoFastResponseUnderLoad(t *testing.T) {
	freshBus(t, "fast")
	responder("fast", func(req model.Message) *model.Message {
		return req.NewRespByMessage(&req, req.GetContent())
	})
	const callers, calls = 16, 500
	var lost atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				want := fmt.Sprintf("%d/%d", c, i)
				resp, err := SendSync("fast", *model.NewMessage("").FillBody(want), 5*time.Second)
				if err != nil || resp.GetContent() != want {
					lost.Add(1)
				}
			}
		}(c)
	}
	wg.Wait()
	if n := lost.Load(); n != 0 {
		t.Fatalf("%d of %d sync calls lost their response", n, callers*calls)
	}
}

func TestSendRespWithNobodyWaiting(t *testing.T) {
	freshBus(t)
	done := make(chan struct{})
	go func() {
		SendResp(*model.NewMessage("no-such-request"))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("SendResp blocked with nobody waiting")
	}
}

func TestSendRespDuplicateDoesNotBlock(t *testing.T) {
	freshBus(t, "twice")
	responder("twice", func(req model.Message) *model.Message {
		resp := req.NewRespByMessage(&req, "first")
		SendResp(*resp)
		SendResp(*resp) // the surplus one must be dropped, not block
		return nil
	})
	if _, err := SendSync("twice", *model.NewMessage(""), time.Second); err != nil {
		t.Fatalf("SendSync: %v", err)
	}
}

func TestSendToGroupReachesEveryMember(t *testing.T) {
	freshBus(t, "a", "b", "c")
	AddModuleGroup("a", "hub")
	AddModuleGroup("b", "hub")
	AddModuleGroup("c", "other")
	SendToGroup("hub", *model.NewMessage("").FillBody("x"))
	for _, m := range []string{"a", "b"} {
		got, err := Receive(m)
		if err != nil || got.GetContent() != "x" {
			t.Fatalf("%s: got %v, %v", m, got.GetContent(), err)
		}
	}
	if len(cur().inboxes["c"].messages) != 0 {
		t.Fatal("a module outside the group got the message")
	}
	SendToGroup("nobody", *model.NewMessage("")) // logged, no panic
}

func TestSendToGroupDoesNotBlockOnFullInbox(t *testing.T) {
	freshBus(t, "full")
	AddModuleGroup("full", "g")
	for i := 0; i < InboxSize; i++ {
		Send("full", *model.NewMessage(""))
	}
	done := make(chan struct{})
	go func() { SendToGroup("g", *model.NewMessage("").FillBody("late")); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("SendToGroup blocked its caller on a full inbox")
	}
	for i := 0; i < InboxSize; i++ {
		if _, err := Receive("full"); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := Receive("full"); err != nil || m.GetContent() != "late" {
		t.Fatalf("the message queued behind the full inbox was lost: %v %v", m.GetContent(), err)
	}
}

func TestSendToGroupSyncAllRespond(t *testing.T) {
	freshBus(t, "a", "b")
	for _, m := range []string{"a", "b"} {
		AddModuleGroup(m, "twin")
		responder(m, func(req model.Message) *model.Message { return req.NewRespByMessage(&req, "ok") })
	}
	if err := SendToGroupSync("twin", *model.NewMessage(""), time.Second); err != nil {
		t.Fatalf("SendToGroupSync: %v", err)
	}
}

func TestSendToGroupSyncForeignResponse(t *testing.T) {
	freshBus(t, "good", "bad")
	AddModuleGroup("good", "twin")
	AddModuleGroup("bad", "twin")
	responder("good", func(req model.Message) *model.Message { return req.NewRespByMessage(&req, "ok") })
	responder("bad", func(req model.Message) *model.Message {
		foreign := model.NewMessage("some-other-request")
		return foreign
	})
	err := SendToGroupSync("twin", *model.NewMessage(""), 100*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want a timeout naming the missing response", err)
	}
	if want := "1 of 2 modules responded"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

func TestSendToGroupSyncUnknownGroup(t *testing.T) {
	freshBus(t)
	if err := SendToGroupSync("nobody", *model.NewMessage(""), time.Second); !errors.Is(err, ErrUnknownGroup) {
		t.Fatalf("got %v, want ErrUnknownGroup", err)
	}
}

func TestAfterCleanupSendAndReceiveDoNotPanic(t *testing.T) {
	freshBus(t, "gone")
	AddModuleGroup("gone", "g")
	Cleanup("gone")
	Send("gone", *model.NewMessage(""))
	SendToGroup("g", *model.NewMessage(""))
	if _, err := Receive("gone"); err == nil {
		t.Fatal("Receive after Cleanup returned no error")
	}
	if _, err := SendSync("gone", *model.NewMessage(""), 10*time.Millisecond); err == nil {
		t.Fatal("SendSync after Cleanup returned no error")
	}
}

func TestCleanupReleasesBlockedSenderAndReceiver(t *testing.T) {
	freshBus(t, "full", "empty")
	for i := 0; i < InboxSize; i++ {
		Send("full", *model.NewMessage(""))
	}
	sent := make(chan struct{})
	go func() { Send("full", *model.NewMessage("")); close(sent) }()
	received := make(chan error)
	go func() { _, err := Receive("empty"); received <- err }()
	time.Sleep(20 * time.Millisecond)
	Cleanup("full")
	Cleanup("empty")
	select {
	case <-sent:
	case <-time.After(time.Second):
		t.Fatal("a sender stayed blocked on a cleaned-up inbox")
	}
	select {
	case err := <-received:
		if !errors.Is(err, ErrUnknownModule) {
			t.Fatalf("Receive returned %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Receive stayed blocked after Cleanup")
	}
}

func TestCancelReleasesReceive(t *testing.T) {
	freshBus(t, "edged")
	received := make(chan error)
	go func() { _, err := Receive("edged"); received <- err }()
	time.Sleep(20 * time.Millisecond)
	Cancel()
	select {
	case err := <-received:
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("Receive returned %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Receive stayed blocked after the context was cancelled")
	}
	select {
	case <-Done():
	default:
		t.Fatal("Done is not closed after Cancel")
	}
}

func TestContextWorksBeforeInit(t *testing.T) {
	global.Store(newBus())
	if GetContext() == nil || Done() == nil {
		t.Fatal("context not usable before InitContext")
	}
	if GetContext().Err() != nil {
		t.Fatal("fresh context already cancelled")
	}
}

// Upstream gives a re-added module a fresh inbox; its module tests re-add
// modules and must not receive what earlier tests queued.
func TestAddModuleAgainGivesFreshInbox(t *testing.T) {
	freshBus(t, "meta")
	AddModuleGroup("meta", "g")
	Send("meta", *model.NewMessage("").FillBody("stale"))
	AddModule(&common.ModuleInfo{ModuleName: "meta", ModuleType: common.MsgCtxTypeChannel})
	if n := len(cur().inboxes["meta"].messages); n != 0 {
		t.Fatalf("the re-added module's inbox holds %d messages", n)
	}
	Send("meta", *model.NewMessage("").FillBody("direct"))
	SendToGroup("g", *model.NewMessage("").FillBody("group"))
	for _, want := range []string{"direct", "group"} {
		m, err := Receive("meta")
		if err != nil || m.GetContent() != want {
			t.Fatalf("got %v, %v; want %q", m.GetContent(), err, want)
		}
	}
}

// A sender waiting for room in an inbox that AddModule replaces gives up
// rather than waiting for a reader that will never come.
func TestAddModuleAgainReleasesBlockedSender(t *testing.T) {
	freshBus(t, "full")
	for i := 0; i < InboxSize; i++ {
		Send("full", *model.NewMessage(""))
	}
	errc := make(chan error, 1)
	go func() {
		_, err := SendSync("full", *model.NewMessage(""), 10*time.Second)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	AddModule(&common.ModuleInfo{ModuleName: "full", ModuleType: common.MsgCtxTypeChannel})
	select {
	case err := <-errc:
		if !errors.Is(err, ErrUnknownModule) {
			t.Fatalf("SendSync returned %v, want ErrUnknownModule", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a sender stayed blocked on a replaced inbox")
	}
}

// A receive already waiting on the replaced inbox stays with it, as on
// upstream's bus, so that a stale module instance does not take messages
// meant for the re-added one; shutdown still releases it.
func TestAddModuleAgainLeavesWaitingReceiverOnOldInbox(t *testing.T) {
	freshBus(t, "meta")
	stale := make(chan error, 1)
	go func() { _, err := Receive("meta"); stale <- err }()
	time.Sleep(20 * time.Millisecond)
	AddModule(&common.ModuleInfo{ModuleName: "meta", ModuleType: common.MsgCtxTypeChannel})
	Send("meta", *model.NewMessage("").FillBody("new"))
	fresh := make(chan model.Message, 1)
	go func() {
		if m, err := Receive("meta"); err == nil {
			fresh <- m
		}
	}()
	select {
	case m := <-fresh:
		if m.GetContent() != "new" {
			t.Fatalf("got %v, want the message sent after the re-add", m.GetContent())
		}
	case err := <-stale:
		t.Fatalf("the receive waiting on the old inbox returned first (%v)", err)
	case <-time.After(time.Second):
		t.Fatal("the message sent after the re-add did not arrive")
	}
	select {
	case err := <-stale:
		t.Fatalf("the receive waiting on the old inbox returned %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	Cancel()
	select {
	case err := <-stale:
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("got %v, want ErrStopped", err)
		}
	case <-time.After(time.Second):
		t.Fatal("shutdown left a receive blocked on a replaced inbox")
	}
}

// Modules hand SendSync's error text to their peers, so it reads as
// upstream's; errors.Is still tells the cases apart.
func TestSendSyncErrorsReadAsUpstream(t *testing.T) {
	freshBus(t, "silent", "busy")
	if _, err := SendSync("nobody", *model.NewMessage(""), time.Second); err == nil ||
		err.Error() != "bad request module name(nobody)" || !errors.Is(err, ErrUnknownModule) {
		t.Errorf("unknown module: %v", err)
	}
	req := model.NewMessage("")
	if _, err := SendSync("silent", *req, 10*time.Millisecond); err == nil ||
		err.Error() != "timeout to get response for message "+req.GetID() || !errors.Is(err, ErrTimeout) {
		t.Errorf("no response: %v", err)
	}
	for i := 0; i < InboxSize; i++ {
		Send("busy", *model.NewMessage(""))
	}
	req = model.NewMessage("")
	if _, err := SendSync("busy", *req, 10*time.Millisecond); err == nil ||
		err.Error() != "timeout to send message "+req.GetID() || !errors.Is(err, ErrTimeout) {
		t.Errorf("full inbox: %v", err)
	}
	if _, err := Receive("nobody"); err == nil ||
		err.Error() != "failed to get channel for module(nobody)" || !errors.Is(err, ErrUnknownModule) {
		t.Errorf("receive for unknown module: %v", err)
	}
}

// As on upstream's bus, a module without an inbox joins no group, so that a
// sync group send does not wait for a member that cannot receive.
func TestAddModuleGroupWithoutInboxIsIgnored(t *testing.T) {
	freshBus(t, "a")
	AddModuleGroup("a", "twin")
	AddModuleGroup("ghost", "twin")
	if _, ok := cur().groups["twin"]["ghost"]; ok {
		t.Fatal("a module without an inbox joined the group")
	}
	responder("a", func(req model.Message) *model.Message { return req.NewRespByMessage(&req, "ok") })
	if err := SendToGroupSync("twin", *model.NewMessage(""), time.Second); err != nil {
		t.Fatalf("SendToGroupSync: %v", err)
	}
}
