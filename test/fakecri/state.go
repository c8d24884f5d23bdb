package fakecri

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
)

// State is what the runtime holds: every sandbox and container, as a test
// compares them with what the node and the cloud say. Stop and remove
// calls, and containers whose command ended, show here as the kubelet's
// ListPodSandbox and ListContainers see them.
type State struct {
	Sandboxes  []SandboxState   `json:"sandboxes"`
	Containers []ContainerState `json:"containers"`
}

// SandboxState is one sandbox: its pod as namespace/name with the pod's
// UID, and SANDBOX_READY or SANDBOX_NOTREADY.
type SandboxState struct {
	ID    string `json:"id"`
	Pod   string `json:"pod"`
	UID   string `json:"uid"`
	State string `json:"state"`
	IP    string `json:"ip,omitempty"`
}

// ContainerState is one container: its sandbox, its pod as namespace/name,
// its name, and CONTAINER_CREATED, CONTAINER_RUNNING or CONTAINER_EXITED.
type ContainerState struct {
	ID        string `json:"id"`
	SandboxID string `json:"sandbox"`
	Pod       string `json:"pod"`
	Name      string `json:"name"`
	State     string `json:"state"`
}

// ReadState reads a state file Options.StateFile named.
func ReadState(path string) (State, error) {
	var st State
	data, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// state is the runtime's State, sorted by ID. The caller holds s.mu.
func (s *service) state() State {
	st := State{Sandboxes: []SandboxState{}, Containers: []ContainerState{}}
	for _, sb := range s.sandboxes {
		md := sb.status.Metadata
		one := SandboxState{ID: sb.status.Id, Pod: md.GetNamespace() + "/" + md.GetName(), UID: md.GetUid(), State: sb.status.State.String()}
		if sb.status.Network != nil {
			one.IP = sb.status.Network.Ip
		}
		st.Sandboxes = append(st.Sandboxes, one)
	}
	for _, c := range s.containers {
		l := c.status.Labels
		st.Containers = append(st.Containers, ContainerState{ID: c.status.Id, SandboxID: c.sandboxID,
			Pod:  l["io.kubernetes.pod.namespace"] + "/" + l["io.kubernetes.pod.name"],
			Name: c.status.Metadata.GetName(), State: c.status.State.String()})
	}
	sort.Slice(st.Sandboxes, func(i, j int) bool { return st.Sandboxes[i].ID < st.Sandboxes[j].ID })
	sort.Slice(st.Containers, func(i, j int) bool { return st.Containers[i].ID < st.Containers[j].ID })
	return st
}

// saveState writes the state to Options.StateFile when it differs from
// what was written last: a new file renamed over the old one, so that a
// reader never sees half of one.
func (s *service) saveState() {
	s.mu.Lock()
	data, err := json.Marshal(s.state())
	s.mu.Unlock()
	if err != nil {
		return
	}
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	if bytes.Equal(data, s.savedState) {
		return
	}
	tmp := s.opts.StateFile + ".new"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return
	}
	if err := os.Rename(tmp, s.opts.StateFile); err != nil {
		return
	}
	s.savedState = data
}
