package reconnect

import (
	"io/fs"
	"testing"
	"time"
)

func TestStatusPathIsBesideTheLog(t *testing.T) {
	if got := StatusPath("windows", `C:\var\log\kubeedge\edgecore.log`); got != `C:\var\log\kubeedge\hub-status.json` {
		t.Errorf("windows: %s", got)
	}
	if got := StatusPath("linux", "/var/log/kubeedge/edgecore.log"); got != "/var/log/kubeedge/hub-status.json" {
		t.Errorf("linux: %s", got)
	}
}

func TestStatusRoundTripAndDescribe(t *testing.T) {
	since := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	s := Status{PID: 7, Since: since, Waiting: "waiting for the node's certificates: x"}
	read := func(string) ([]byte, error) { return s.Encode(), nil }
	got, ok, err := ReadStatus(read, "p")
	if err != nil || !ok || got != s {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	if d := got.Describe(7, since.Add(time.Minute)); d != "not connected to cloudcore since 2026-11-27T08:00:00Z (1m0s ago): waiting for the node's certificates: x" {
		t.Errorf("describe: %q", d)
	}
	if d := got.Describe(8, since); d != "" {
		t.Errorf("another process's status: %q", d)
	}
	// Connected, but the node cannot list its pods: said after the
	// connection.
	listless := Status{PID: 7, Connected: true, Since: since, Pods: "no answer within 10s: turn on dynamicController"}
	if got, _, _ := ReadStatus(func(string) ([]byte, error) { return listless.Encode(), nil }, "p"); got != listless {
		t.Errorf("round trip of the pods' problem: %+v", got)
	}
	if d := listless.Describe(7, since.Add(time.Minute)); d != "connected to cloudcore since 2026-11-27T08:00:00Z (1m0s ago); "+
		"the node cannot list its pods from the cloud: no answer within 10s: turn on dynamicController" {
		t.Errorf("describe: %q", d)
	}
	if _, ok, err := ReadStatus(func(string) ([]byte, error) { return nil, fs.ErrNotExist }, "p"); ok || err != nil {
		t.Errorf("no file: %v %v", ok, err)
	}
	if _, _, err := ReadStatus(func(string) ([]byte, error) { return []byte("{"), nil }, "p"); err == nil {
		t.Error("a torn file was read")
	}
}
