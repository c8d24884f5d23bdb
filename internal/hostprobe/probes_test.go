package hostprobe

import (
	"context"
	"testing"
	"time"
)

// Every caller in the process shares one set, and that set's CRI probe is
// the real one: it reaches a runtime and reads its answer.
func TestSystemIsMadeOnceAndWired(t *testing.T) {
	first := System()
	if second := System(); first != second {
		t.Fatal("System made a second probe set")
	}
	for name, missing := range map[string]bool{
		"WindowsVersion": first.WindowsVersion == nil, "ContainersFeature": first.ContainersFeature == nil,
		"Elevated": first.Elevated == nil, "FreeDisk": first.FreeDisk == nil, "DiskSize": first.DiskSize == nil,
		"CRI": first.CRI == nil,
	} {
		if missing {
			t.Errorf("System has no %s probe", name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := first.CRI(ctx, serveCRI(t, &fakeRuntime{networkReady: true}))
	if err != nil || st.RuntimeName != "containerd" {
		t.Errorf("CRI probe: %+v, %v", st, err)
	}
}
