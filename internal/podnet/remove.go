package podnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/hns"
)

// Remover removes the HNS network and host endpoint that cni-config
// created, as its record says (reset --network), and nothing else: an
// object cni-config found and reused, or one of the same name that has
// since been replaced (another ID), is left alone.
type Remover struct {
	StateFile string
	FS        hostfs.FS
	HNS       HNS
}

// HostRemover removes the network cni-config recorded in d's layout, from
// this host's HNS.
func HostRemover(d *deps.Dependencies) Remover {
	return Remover{StateFile: StateFile(d.Layout), FS: d.FS, HNS: hns.New()}
}

// Describe says what Remove will remove, for reset's plan.
func (r Remover) Describe() string {
	st, ok, err := ReadState(r.FS, r.StateFile)
	switch {
	case err != nil:
		return "remove the pod network cni-config created (its record cannot be read: " + steps.FirstLine(err, "") + ")"
	case !ok || st.Network == nil:
		return "remove the pod network cni-config created (" + r.StateFile + " records none)"
	}
	var what []string
	if e := st.Endpoint; e != nil && e.Created {
		what = append(what, fmt.Sprintf("HNS endpoint %q", e.Name))
	}
	if n := st.Network; n.Created {
		what = append(what, fmt.Sprintf("HNS network %q", n.Name))
	}
	if len(what) == 0 {
		return fmt.Sprintf("forget HNS network %q: cni-config found it and did not create it, so it stays", st.Network.Name)
	}
	return "remove " + strings.Join(what, " and ") + ", which cni-config created, and " + r.StateFile
}

// Remove deletes the endpoint, then the network, then the record. The CNI
// config file stays; pods get no network until cni-config runs again.
func (r Remover) Remove(_ context.Context, out io.Writer) error {
	st, ok, err := ReadState(r.FS, r.StateFile)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(out, "no pod network recorded in %s: nothing to remove\n", r.StateFile)
		return nil
	}
	// The Services' load balancers first: HNS keeps a network whose
	// endpoints they use.
	if n := st.Network; n != nil && n.Created {
		if err := RemoveProxierObjects(out, r.HNS, st); err != nil {
			return err
		}
	}
	if e := st.Endpoint; e != nil {
		if err := r.remove("endpoint", e, func(name string) (string, error) {
			x, err := r.HNS.EndpointByName(name)
			if x == nil || err != nil {
				return "", err
			}
			return x.ID, nil
		}, r.HNS.DeleteEndpoint, out); err != nil {
			return err
		}
	}
	if n := st.Network; n != nil {
		if n.Created {
			fmt.Fprintf(out, "removing HNS network %q; the host is off the network for a few seconds\n", n.Name)
		}
		if err := r.remove("network", n, func(name string) (string, error) {
			x, err := r.HNS.NetworkByName(name)
			if x == nil || err != nil {
				return "", err
			}
			return x.ID, nil
		}, r.HNS.DeleteNetwork, out); err != nil {
			return err
		}
	}
	if err := r.FS.Remove(r.StateFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", r.StateFile, err)
	}
	fmt.Fprintf(out, "removed %s\n", r.StateFile)
	if st.Network != nil && st.CNIConfFile != "" {
		fmt.Fprintf(out, "%s stays: pods on this host get no network until edgecore.exe cni-config runs again\n", st.CNIConfFile)
	}
	return nil
}

func (r Remover) remove(kind string, o *Object, lookup func(string) (string, error), del func(string) error, out io.Writer) error {
	if !o.Created {
		fmt.Fprintf(out, "HNS %s %q was there before cni-config: left alone\n", kind, o.Name)
		return nil
	}
	id, err := lookup(o.Name)
	switch {
	case errors.Is(err, hns.ErrNotWindows):
		return err
	case err != nil:
		return fmt.Errorf("look up HNS %s %q: %w", kind, o.Name, err)
	case id == "":
		fmt.Fprintf(out, "HNS %s %q is already gone\n", kind, o.Name)
		return nil
	case id != o.ID:
		fmt.Fprintf(out, "HNS %s %q is not the one cni-config created (ID %s, recorded %s): left alone\n", kind, o.Name, id, o.ID)
		return nil
	}
	if err := del(id); err != nil {
		return fmt.Errorf("remove HNS %s %q: %w", kind, o.Name, err)
	}
	fmt.Fprintf(out, "removed HNS %s %q\n", kind, o.Name)
	return nil
}

// Written is the CNI configuration that who (join) wrote, as the record in
// l's place says; ok is false when there is no record, or when it names
// another writer (cni-config has written the file since). A record naming a
// file outside l's CNI conf folder is refused: reset removes nothing else.
func Written(fsys hostfs.FS, l config.Layout, who string) (State, bool, error) {
	st, ok, err := ReadState(fsys, StateFile(l))
	if err != nil || !ok || st.WrittenBy != who || st.CNIConfFile == "" {
		return State{}, false, err
	}
	if !ospath.Within(l.GOOS, l.CNIConfDir, st.CNIConfFile) {
		return State{}, false, fmt.Errorf("%s names %s, outside %s: it was not written by %s; remove it by hand if nothing uses it",
			StateFile(l), st.CNIConfFile, l.CNIConfDir, who)
	}
	// join creates only the layout's CNI folders and the parents they
	// lack, all in containerd's folder.
	for _, d := range st.Dirs {
		if !ospath.Within(l.GOOS, l.ContainerdDir, d) && !ospath.Within(l.GOOS, l.CNIConfDir, d) && !ospath.Within(l.GOOS, l.CNIBinDir, d) {
			return State{}, false, fmt.Errorf("%s names the folder %s, outside %s: it was not written by %s; remove it by hand if nothing uses it",
				StateFile(l), d, l.ContainerdDir, who)
		}
	}
	return st, true, nil
}

// removeDirs removes the folders dirs (parents first) newest first, each
// only when empty: a folder that holds what someone else put there since
// stays, and is named.
func removeDirs(out io.Writer, fsys hostfs.FS, dirs []string) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		removed, err := hostfs.RemoveIfEmpty(fsys, d)
		switch {
		case err != nil:
			return fmt.Errorf("remove %s: %w", d, err)
		case removed:
			fmt.Fprintf(out, "removed %s\n", d)
		default:
			fmt.Fprintf(out, "kept %s: it holds files join did not write\n", d)
		}
	}
	return nil
}

// RemoveWritten removes the CNI configuration st records, then the record,
// unless the record still names an HNS network cni-config or join created:
// `reset --network` reads it to remove that network.
func RemoveWritten(out io.Writer, fsys hostfs.FS, l config.Layout, st State) error {
	if err := fsys.Remove(st.CNIConfFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", st.CNIConfFile, err)
	}
	fmt.Fprintf(out, "removed %s\n", st.CNIConfFile)
	dirs := st.Dirs
	if n := st.Network; n != nil && n.Created {
		st.CNIConfFile, st.WrittenBy, st.Dirs = "", "", nil
		if err := writeFile(fsys, l.GOOS, StateFile(l), st.encode()); err != nil {
			return fmt.Errorf("update %s: %w", StateFile(l), err)
		}
		fmt.Fprintf(out, "kept HNS network %q and its record %s: `edgecore.exe reset --network` removes them\n", n.Name, StateFile(l))
		return removeDirs(out, fsys, dirs)
	}
	if err := fsys.Remove(StateFile(l)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", StateFile(l), err)
	}
	fmt.Fprintf(out, "removed %s\n", StateFile(l))
	return removeDirs(out, fsys, dirs)
}
