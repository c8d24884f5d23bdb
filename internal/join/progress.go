package join

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/podnet"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/internal/steps"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// progress is join's record of what it has changed on the host, kept in
// the kubeedge directory (config.Layout.JoinRecord) from the moment that
// directory exists until join ends. A join whose process dies half-way (a
// power cut, a crash, a closed console) leaves it, and the next join
// finds it and takes back what it names before it starts, so that
// running join again after a crash joins the node rather than refusing an
// "earlier installation" that is only its own half; reset removes what it
// names too. Each change is noted before it is made: a record may name a
// change that never happened (undoing it finds nothing), never the
// other way round.
type progress struct {
	// PID is the join process that wrote it, Started when it began.
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Node    string    `json:"node"`
	// ConfigFile, LogFile and Service are the join's --config, log file
	// and service name.
	ConfigFile string `json:"configFile"`
	LogFile    string `json:"logFile"`
	Service    string `json:"service"`
	// Created are the directories join created, parents first.
	Created []string `json:"created,omitempty"`
	// Config: the configuration (with the join token) may be written.
	Config bool `json:"config,omitempty"`
	// Runtime and Network: the bundled runtime and the pod network may be
	// in place, each as its own record names it.
	Runtime bool `json:"runtime,omitempty"`
	Network bool `json:"network,omitempty"`
	// ServiceInstalled: the service may be installed; NewFiles are the
	// files it creates that did not exist before (certificates,
	// database), which go with it.
	ServiceInstalled bool     `json:"serviceInstalled,omitempty"`
	NewFiles         []string `json:"newFiles,omitempty"`
}

// recordPath is where join keeps its progress.
func (j *Join) recordPath() string { return j.o.Layout.JoinRecord }

// note records a change before it is made. The record is written only
// once the kubeedge directory exists: before that join has changed
// nothing but the directories it is creating, which a join run again
// finds and keeps.
func (j *Join) note(change func(p *progress)) error {
	if j.progress == nil {
		j.progress = &progress{
			PID: os.Getpid(), Started: j.sys.Clock.Now().UTC(), Node: j.NodeName(),
			ConfigFile: j.o.ConfigFile, LogFile: j.o.LogFile, Service: j.svc.Name,
		}
	}
	change(j.progress)
	j.progress.Created = j.created
	j.progress.NewFiles = j.newFiles
	data, err := json.MarshalIndent(j.progress, "", "  ")
	if err != nil {
		return err
	}
	if err := j.sys.FS.WriteFile(j.recordPath(), data); err != nil {
		return fmt.Errorf("write join's record of its progress %s: %w", j.recordPath(), err)
	}
	return nil
}

// forget removes the record: join ended, joined or rolled back.
func (j *Join) forget(out io.Writer) {
	if j.progress == nil {
		return
	}
	if _, err := hostfs.RemoveFile(j.sys.FS, j.recordPath()); err != nil {
		fmt.Fprintf(out, "warning: could not remove join's record of its progress: %v\n", err)
		return
	}
	j.progress = nil
}

// readProgress reads the record an earlier join left, nil when there is
// none.
func readProgress(fsys hostfs.FS, path string) (*progress, error) {
	data, err := fsys.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var p progress
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s, the record an interrupted join left, is damaged (%v): remove the node's files with `edgecore.exe reset --force`, then run join again", path, err)
	}
	return &p, nil
}

// finishInterrupted takes back what an earlier join that did not end
// (its record says what) changed, before this join begins: the service
// it installed with the files that service made, the runtime and the pod
// network join installs (as their own records name them), the
// configuration with the token, and the directories it created. A join
// that got as far as a service with certificates joined the node: its
// record is dropped and the node kept, and this join then refuses the
// earlier installation as usual. Only paths inside the node's own
// directories (and the record's own --config) are removed, and only once
// protect has judged those directories to be the administrators' alone:
// the record is read from one of them.
func (j *Join) finishInterrupted(out io.Writer) error {
	rec, err := readProgress(j.sys.FS, j.recordPath())
	if err != nil || rec == nil {
		return err
	}
	if rec.PID != os.Getpid() && j.sys.Alive != nil && j.sys.Alive(rec.PID) {
		return fmt.Errorf("another join (process %d, started %s) is in progress: wait for it to end", rec.PID, rec.Started.Format(time.RFC3339))
	}
	if err := protect.Check(j.protected, j.sys.Protect, protect.Adopting); err != nil {
		return fmt.Errorf("an earlier join did not end (its record %s), and what it left is not taken back: %w", j.recordPath(), err)
	}
	if rec.ServiceInstalled {
		certs := true
		for _, f := range []string{j.cfg.Modules.EdgeHub.TLSCertFile, j.cfg.Modules.EdgeHub.TLSPrivateKeyFile} {
			if ok, err := hostfs.Exists(j.sys.FS, f); err != nil || !ok {
				certs = false
			}
		}
		if installed, err := j.sys.Services.Installed(rec.Service); err == nil && installed && certs {
			fmt.Fprintf(out, "An earlier join of node %s (process %d, started %s) ended after its service %q got the node's certificates: the node is joined, and the record %s is removed.\n",
				rec.Node, rec.PID, rec.Started.Format(time.RFC3339), rec.Service, j.recordPath())
			_, err := hostfs.RemoveFile(j.sys.FS, j.recordPath())
			return err
		}
	}
	fmt.Fprintf(out, "An earlier join of node %s (process %d, started %s) did not end: taking back what it changed (%s)\n",
		rec.Node, rec.PID, rec.Started.Format(time.RFC3339), j.recordPath())
	inside := func(p string) bool {
		for _, d := range j.o.Layout.NodeDirs() {
			if ospath.Within(j.goos, d, p) {
				return true
			}
		}
		return ospath.Same(j.goos, p, rec.ConfigFile)
	}
	undo := &Join{o: j.o, sys: j.sys, goos: j.goos, svc: j.svc}
	undo.o.ConfigFile, undo.o.LogFile, undo.svc.Name = rec.ConfigFile, rec.LogFile, rec.Service
	undo.installed, undo.wroteConfig = rec.ServiceInstalled, rec.Config
	for _, f := range rec.NewFiles {
		if inside(f) {
			undo.newFiles = append(undo.newFiles, f)
		}
	}
	// The folders join created outside the node's own (the kubelet's
	// root, the pod logs, the folders above them) are removed only where
	// empty, after the rest.
	var ifEmpty []string
	for _, d := range rec.Created {
		switch {
		case inside(d):
			undo.created = append(undo.created, d)
		case j.joinFolder(d):
			ifEmpty = append(ifEmpty, d)
		}
	}
	if !inside(rec.ConfigFile) {
		undo.wroteConfig = false
	}
	w := steps.Indented(out)
	var errs []error
	if err := undo.uninstallService(w); err != nil && !errors.Is(err, service.ErrNotInstalled) {
		errs = append(errs, err)
	}
	// In the reverse of join's order: the pod network's files lie in the
	// runtime's folder, which is removed only once empty.
	if rec.Network {
		if st, ok, err := podnet.Written(j.sys.PodNet.Env.FS, j.o.Layout, WrittenBy); err != nil {
			errs = append(errs, err)
		} else if ok {
			errs = append(errs, podnet.RemoveWritten(w, j.sys.PodNet.Env.FS, j.o.Layout, st))
		}
		// The HNS network and endpoint join created go too, as
		// `reset --network` removes them: left, the next join would
		// find them, reuse them and not take them back.
		if st, ok, err := podnet.ReadState(j.sys.PodNet.Env.FS, podnet.StateFile(j.o.Layout)); err != nil {
			errs = append(errs, err)
		} else if ok && st.Network != nil && st.Network.Created {
			rm := podnet.Remover{StateFile: podnet.StateFile(j.o.Layout), FS: j.sys.PodNet.Env.FS, HNS: j.sys.PodNet.Env.HNS}
			errs = append(errs, rm.Remove(context.Background(), w))
		}
	}
	if rec.Runtime {
		if r, ok, err := runtimeinstall.ReadRecord(j.sys.Runtime, j.o.Layout); err != nil {
			errs = append(errs, err)
		} else if ok {
			errs = append(errs, runtimeinstall.Remove(w, j.sys.Runtime, j.o.Layout, r))
		}
	}
	errs = append(errs, undo.removeConfig(w))
	fail := func(err error) error {
		return steps.WithFix(fmt.Errorf("taking back what an earlier, interrupted join changed: %w", err),
			"close whatever holds the node's files open and run join again, or remove the node's files with `edgecore.exe reset --force`")
	}
	// The record stays while anything it names is left, and goes before
	// the directories that hold it.
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	if _, err := hostfs.RemoveFile(j.sys.FS, j.recordPath()); err != nil {
		return fail(err)
	}
	if err := undo.removeDirs(w); err != nil {
		return fail(err)
	}
	for i := len(ifEmpty) - 1; i >= 0; i-- {
		if removed, err := hostfs.RemoveIfEmpty(j.sys.FS, ifEmpty[i]); err != nil {
			return fail(err)
		} else if removed {
			fmt.Fprintf(w, "removed %s\n", ifEmpty[i])
		}
	}
	return nil
}

// joinFolder reports whether join creates d outside the node's own
// directories: the kubelet's root, the pod logs, or a folder above one of
// them or of the node's directories.
func (j *Join) joinFolder(d string) bool {
	l := j.o.Layout
	for _, f := range append(l.NodeDirs(), l.KubeletRootDir, l.PodLogsDir) {
		if ospath.Within(j.goos, d, f) {
			return true
		}
	}
	return ospath.Within(j.goos, l.KubeletRootDir, d) || ospath.Within(j.goos, l.PodLogsDir, d)
}
