// Package podnet carries out `edgecore.exe cni-config`: the pod network a
// Windows node gets (nat or l2bridge), the CNI config file, containerd's
// config.toml pointing at the CNI directories, and the record of what it
// created, which `reset --network` and `preflight` read.
//
// The decisions are made on data: the host's facts come in through Options,
// HNS through the HNS interface (windows/hns on a real host, a recording
// fake in the tests), files through FS. Every step that creates something
// registers its undo, so a failure half-way leaves the host as it was.
package podnet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
)

// StateFile is where cni-config records what it set up: in containerd's
// directory, beside the config.toml it edits and that file's backups. The
// pod network belongs to containerd and outlives the node: reset (without
// --network) leaves it, and its record, in place while removing
// C:\etc\kubeedge; reset --network removes both. (Not in the CNI conf
// directory: containerd would read a .json file there as a network.)
func StateFile(l config.Layout) string {
	return ospath.Join(l.GOOS, l.ContainerdDir, "edgecore-cni-config.json")
}

// State is what cni-config set up on this host.
type State struct {
	Mode   string `json:"mode"`
	Plugin string `json:"plugin,omitempty"`
	// CNIConfFile is the file written, CNIBinDir where the plugins are
	// expected; containerd's config.toml points at both.
	CNIConfFile string `json:"cniConfFile"`
	CNIBinDir   string `json:"cniBinDir"`
	// WrittenBy names the command that wrote CNIConfFile when it was
	// not cni-config: "join", whose reset removes it.
	WrittenBy string `json:"writtenBy,omitempty"`
	// Dirs are the CNI folders (and their parents) the writer created,
	// parents first: the reset of what join wrote removes those that are
	// empty, and nothing it found.
	Dirs   []string `json:"dirs,omitempty"`
	Subnet string   `json:"subnet,omitempty"`
	NodeIP string   `json:"nodeIP,omitempty"`
	// HostIP is the host's own address on the network: the l2bridge
	// host endpoint's, the nat network's gateway. Pods reach the host
	// there, and the node's DNS responder answers them there.
	HostIP string `json:"hostIP,omitempty"`
	// Network and Endpoint are the HNS objects of an l2bridge network.
	Network  *Object `json:"network,omitempty"`
	Endpoint *Object `json:"endpoint,omitempty"`
}

// Object is an HNS object by name and ID. Created is set when cni-config
// created it (in this run or an earlier one): reset --network removes only
// those, and only while the ID still matches.
type Object struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	IP      string `json:"ip,omitempty"`
	Created bool   `json:"created"`
}

// ReadState reads the record; ok is false when there is none.
func ReadState(fsys hostfs.FS, path string) (s State, ok bool, err error) {
	data, err := fsys.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return State{}, false, fmt.Errorf("%s is not cni-config's record (%v): delete it and run cni-config again", path, err)
	}
	return s, true, nil
}

// HostAddress is the host's own address on the network; false when the
// record does not say (a nat record written before it kept one).
func (s State) HostAddress() (netip.Addr, bool) {
	for _, v := range []string{s.HostIP, endpointIP(s)} {
		if a, err := netip.ParseAddr(v); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func endpointIP(s State) string {
	if s.Endpoint != nil && s.Mode == cni.ModeL2Bridge {
		return s.Endpoint.IP
	}
	return ""
}

// NetworkName is the HNS network the pods are on: the l2bridge network
// cni-config made, or the nat plugin's "nat".
func (s State) NetworkName() string {
	if s.Mode == cni.ModeL2Bridge && s.Network != nil {
		return s.Network.Name
	}
	if s.Mode == cni.ModeNAT {
		return cni.NetworkName
	}
	return ""
}

// PodRange is the network's pod range; false when the record does not say.
func (s State) PodRange() (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s.Subnet)
	return p.Masked(), err == nil
}

// dirsOf are the folders recorded as made by who, the writer of a run
// about to replace the record: a run of another writer (cni-config after
// join) takes over the files, and join's reset no longer removes them.
func (s State) dirsOf(who string) []string {
	if s.WrittenBy != who {
		return nil
	}
	return s.Dirs
}

func (s State) encode() []byte {
	data, _ := json.MarshalIndent(s, "", "  ") // plain strings and bools cannot fail
	return append(data, '\n')
}
