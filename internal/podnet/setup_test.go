package podnet

import (
	"bytes"
	"strings"
	"testing"
)

// join runs the network as one step: Apply, and on a failure of it or of
// any later step, Undo. Each of Apply's changes failing in turn, and a
// complete Apply taken back afterwards, must leave the host as it was.
func TestSetupUndoTakesBackApplyWhereverItStopped(t *testing.T) {
	for failAt := 0; failAt <= 9; failAt++ { // 0: Apply succeeds, a later step fails
		h := newHost(t)
		original := h.files(t)
		o := h.options()
		o.WrittenBy = "join"
		s, err := Prepare(o, h.env())
		if err != nil {
			t.Fatal(err)
		}
		if d := s.Describe(); !strings.Contains(d, `create or reuse the HNS network "edgecore-l2bridge"`) || !strings.Contains(d, "write "+o.Output) {
			t.Errorf("Describe: %s", d)
		}
		h.steps.failAt = failAt
		var out bytes.Buffer
		err = s.Apply(&out)
		if (err != nil) != (failAt > 0) {
			t.Fatalf("failing change %d: Apply returned %v\n%s", failAt, err, &out)
		}
		if failAt == 0 && !strings.Contains(h.files(t)["cni-config.json"], `"writtenBy": "join"`) {
			t.Errorf("the record does not name join: %s", h.files(t)["cni-config.json"])
		}
		if err := s.Undo(&out); err != nil {
			t.Fatalf("failing change %d: Undo: %v\n%s", failAt, err, &out)
		}
		if len(h.hns.networks) != 0 || len(h.hns.endpoints) != 0 {
			t.Errorf("failing change %d left HNS objects: %v %v\n%s", failAt, h.hns.networks, h.hns.endpoints, &out)
		}
		if got := h.files(t); names(got) != names(original) || got["config.toml"] != original["config.toml"] {
			t.Errorf("failing change %d left files: %s\n%s", failAt, names(got), &out)
		}
	}
}
