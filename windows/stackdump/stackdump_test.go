package stackdump

import "testing"

func TestEventNameIsGlobalAndPerProcess(t *testing.T) {
	// The name containerd and RKE2 use, so that tools made for them
	// (and their documentation) work for edgecore too.
	if got := EventName(4242); got != `Global\stackdump-4242` {
		t.Errorf("EventName(4242) = %q", got)
	}
}
