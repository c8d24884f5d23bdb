package hostprobe

import (
	"context"
	"testing"
	"time"
)

// The host's set has every probe, and its CRI probe is the real one: it
// reaches a runtime and reads its answer.
func TestHostIsWired(t *testing.T) {
	first := Host()
	for name, missing := range map[string]bool{
		"WindowsVersion": first.WindowsVersion == nil, "ContainersFeature": first.ContainersFeature == nil,
		"Elevated": first.Elevated == nil, "FreeDisk": first.FreeDisk == nil, "DiskSize": first.DiskSize == nil,
		"CRI": first.CRI == nil,
	} {
		if missing {
			t.Errorf("Host has no %s probe", name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := first.CRI(ctx, serveCRI(t, &fakeRuntime{networkReady: true}))
	if err != nil || st.RuntimeName != "containerd" {
		t.Errorf("CRI probe: %+v, %v", st, err)
	}
}
