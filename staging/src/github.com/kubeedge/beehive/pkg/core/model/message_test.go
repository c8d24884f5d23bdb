package model

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// The JSON shape is what deployed cloudcores read; it must not drift.
func TestWireFormat(t *testing.T) {
	m := Message{
		Header:  MessageHeader{ID: "id", ParentID: "p", Timestamp: 7, ResourceVersion: "3", Sync: true, MessageType: "t"},
		Router:  MessageRoute{Source: "s", Destination: "d", Group: "g", Operation: "o", Resource: "r"},
		Content: "c",
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"header":{"msg_id":"id","parent_msg_id":"p","timestamp":7,"resourceversion":"3","sync":true,"type":"t"},` +
		`"route":{"source":"s","destination":"d","group":"g","operation":"o","resource":"r"},"content":"c"}`
	if string(data) != want {
		t.Fatalf("got  %s\nwant %s", data, want)
	}
	empty, _ := json.Marshal(Message{})
	if string(empty) != `{"header":{"msg_id":"","timestamp":0},"route":{},"content":null}` {
		t.Fatalf("zero message encodes as %s", empty)
	}
}

func TestNewMessage(t *testing.T) {
	before := time.Now().UnixMilli()
	m := NewMessage("parent")
	if len(m.GetID()) != 36 || m.GetParentID() != "parent" {
		t.Fatalf("header %+v", m.Header)
	}
	if ts := m.GetTimestamp(); ts < before || ts > time.Now().UnixMilli() {
		t.Fatalf("timestamp %d is not now in milliseconds", ts)
	}
	if NewMessage("").GetID() == m.GetID() {
		t.Fatal("two messages share an ID")
	}
	if !NewRawMessage().IsEmpty() || m.IsEmpty() {
		t.Fatal("IsEmpty must be true only for the zero message")
	}
}

func TestSettersChain(t *testing.T) {
	m := NewRawMessage().BuildHeader("i", "p", 1).BuildRouter("src", "grp", "res", InsertOperation).
		SetDestination("dst").SetType("typ").SetResourceVersion("9").FillBody(42)
	if m.GetID() != "i" || m.GetSource() != "src" || m.GetGroup() != "grp" || m.GetResource() != "res" ||
		m.GetOperation() != "insert" || m.GetDestination() != "dst" || m.GetType() != "typ" ||
		m.GetResourceVersion() != "9" || m.GetContent() != 42 || m.IsSync() {
		t.Fatalf("unexpected message %+v", m)
	}
	old := m.GetID()
	if m.UpdateID().GetID() == old {
		t.Fatal("UpdateID kept the ID")
	}
	m.SetRoute("a", "b")
	if m.GetSource() != "a" || m.GetGroup() != "b" {
		t.Fatal("SetRoute did not set source and group")
	}
}

func TestErrorAndResponseMessages(t *testing.T) {
	req := NewMessage("").BuildRouter("edged", "meta", "default/pod/x", QueryOperation).SetType("t")
	e := NewErrorMessage(req, "boom")
	if e.GetParentID() != req.GetID() || e.GetResource() != req.GetResource() ||
		e.GetOperation() != ResponseErrorOperation || e.GetContent() != "boom" || e.GetSource() != "" || e.GetGroup() != "" {
		t.Fatalf("error message %+v", e)
	}
	r := req.NewRespByMessage(req, "ok")
	if r.GetParentID() != req.GetID() || r.GetSource() != "edged" || r.GetGroup() != "meta" ||
		r.GetResource() != req.GetResource() || r.GetType() != "t" || r.GetOperation() != ResponseOperation || r.GetContent() != "ok" {
		t.Fatalf("response %+v", r)
	}
	c := req.Clone(req)
	if c.GetID() == req.GetID() || c.GetParentID() != req.GetParentID() || c.GetTimestamp() != req.GetTimestamp() ||
		c.GetSource() != req.GetSource() || c.GetResource() != req.GetResource() || c.GetOperation() != req.GetOperation() {
		t.Fatalf("clone %+v of %+v", c, req)
	}
}

func TestGetContentData(t *testing.T) {
	for _, tc := range []struct {
		content interface{}
		want    string
	}{
		{[]byte("raw"), "raw"},
		{"text", "text"},
		{map[string]int{"a": 1}, `{"a":1}`},
	} {
		got, err := NewRawMessage().FillBody(tc.content).GetContentData()
		if err != nil || string(got) != tc.want {
			t.Errorf("content %v: got %q, %v", tc.content, got, err)
		}
	}
	if _, err := NewRawMessage().FillBody(math.Inf(1)).GetContentData(); err == nil {
		t.Error("an unencodable content gave no error")
	}
}

func TestStringNamesRoute(t *testing.T) {
	s := NewMessage("p").BuildRouter("src", "grp", "res", "op").SetDestination("dst").String()
	for _, want := range []string{"p", "src", "grp", "res", "op", "dst"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q does not name %q", s, want)
		}
	}
	if strings.Contains(s, "\n") {
		t.Error("String spans lines")
	}
}

// Modules pass this text on to their peers (metamanager to the cloud and to
// edged), so it must read as upstream's.
func TestGetContentDataErrorReadsAsUpstream(t *testing.T) {
	_, err := NewRawMessage().FillBody(make(chan int)).GetContentData()
	if err == nil || err.Error() != "marshal message content failed: json: unsupported type: chan int" {
		t.Fatalf("got %v", err)
	}
	var unsupported *json.UnsupportedTypeError
	if !errors.As(err, &unsupported) {
		t.Fatal("the encoding error is not wrapped")
	}
}

// A clone keeps what upstream's keeps and nothing more: carrying the sync
// flag or the destination over would make it look like the original request.
func TestCloneKeepsUpstreamsFields(t *testing.T) {
	req := NewMessage("parent").BuildRouter("edged", "meta", "pod", QueryOperation).
		SetDestination("metamanager").SetType("t").SetResourceVersion("5").FillBody("x")
	req.Header.Sync = true
	c := req.Clone(req)
	want := Message{
		Header:  MessageHeader{ID: c.GetID(), ParentID: "parent", Timestamp: req.GetTimestamp()},
		Router:  MessageRoute{Source: "edged", Group: "meta", Resource: "pod", Operation: QueryOperation},
		Content: "x",
	}
	if *c != want {
		t.Fatalf("clone %+v, want %+v", *c, want)
	}
}

func TestStringReadsAsUpstream(t *testing.T) {
	m := NewRawMessage().BuildHeader("i", "p", 1).BuildRouter("s", "g", "r", "o").SetDestination("d")
	want := "MessageID: i ParentID: p Group: g Source: s Destination: d Resource: r Operation: o"
	if got := m.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
