package fakecri

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// The state file follows each change of the runtime: a sandbox and its
// running container, then both stopped, then the sandbox removed.
func TestStateFileFollowsTheRuntime(t *testing.T) {
	path := filepath.Join(testdir.New(t, "fakecri-"), "state.json")
	rs, is := kubeletClients(t, Options{StateFile: path})
	ctx := context.Background()
	pod := runPod(t, rs, is, "default")
	id, cid := pod.id, pod.start(t, "app")
	want := func(sandbox, container string, containers int) {
		t.Helper()
		st, err := ReadState(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Sandboxes) != 1 || st.Sandboxes[0].ID != id || st.Sandboxes[0].Pod != "default/web" ||
			st.Sandboxes[0].UID != "web-uid" || st.Sandboxes[0].State != sandbox {
			t.Fatalf("sandboxes %+v, want %s of default/web (web-uid) %s", st.Sandboxes, id, sandbox)
		}
		if len(st.Containers) != containers {
			t.Fatalf("containers %+v, want %d", st.Containers, containers)
		}
		if containers == 1 && (st.Containers[0].ID != cid || st.Containers[0].SandboxID != id ||
			st.Containers[0].Pod != "default/web" || st.Containers[0].State != container) {
			t.Fatalf("container %+v, want %s in %s of default/web %s", st.Containers[0], cid, id, container)
		}
	}
	want("SANDBOX_READY", "CONTAINER_RUNNING", 1)
	if err := rs.StopPodSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	want("SANDBOX_NOTREADY", "CONTAINER_EXITED", 1)
	if err := rs.RemovePodSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Sandboxes)+len(st.Containers) != 0 {
		t.Fatalf("after the sandbox's removal: %+v, want nothing", st)
	}
}
