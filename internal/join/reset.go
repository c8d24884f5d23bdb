package join

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// ResetOptions are the inputs of `edgecore.exe reset`.
type ResetOptions struct {
	// ConfigFile is the node's configuration (--config); the paths of the
	// certificates and the database are read from it.
	ConfigFile string
	// LogFile is edgecore's log; its directory is removed.
	LogFile string
	// KeepData keeps the database (--keep-data).
	KeepData bool
	// Force resets without asking (--force).
	Force bool
	// DryRun prints what reset would remove and changes nothing.
	DryRun      bool
	Host        config.Host
	ServiceName string
	// Network, when set (--network), removes the HNS network and endpoint
	// that cni-config created, before the empty directories are removed.
	Network NetworkRemover
}

// NetworkRemover removes the pod network cni-config created, and only that
// (podnet.Remover).
type NetworkRemover interface {
	// Describe is the step's line for --dry-run and the confirmation.
	Describe() string
	Remove(ctx context.Context, out io.Writer) error
}

// ErrCancelled is returned when the operator does not confirm the reset.
var ErrCancelled = errors.New("reset cancelled; nothing was changed")

// Reset removes what join set up: the service, the configuration, the
// certificates, the database (unless o.KeepData) and the logs. containerd,
// its containers and images, the CNI configuration and the kubelet's
// directory are left alone. Unless o.Force, it shows what it will remove
// and asks on out, reading the answer from in; when in is not a terminal
// (interactive false) it refuses and asks for --force instead.
func Reset(ctx context.Context, in io.Reader, out io.Writer, interactive bool, o ResetOptions, sys System) error {
	r := newReset(o, sys, out)
	p := r.plan()
	if o.DryRun {
		fmt.Fprintf(out, "Dry run: %s reset would do the following; nothing is changed.\n", config.ExecutableName(r.goos))
		p.Print(out)
		return nil
	}
	if !o.Force {
		if !interactive {
			return errors.New("standard input is not a terminal, so reset cannot ask for confirmation: pass --force to reset without asking")
		}
		fmt.Fprintf(out, "Reset removes node %s from this host:\n", r.nodeName())
		p.Print(out)
		ok, err := Confirm(in, out, "Reset this node?")
		if err != nil {
			return err
		}
		if !ok {
			return ErrCancelled
		}
	}
	fmt.Fprintf(out, "Resetting node %s\n", r.nodeName())
	if err := p.Run(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "Node %s is reset. containerd with its containers and images, the CNI configuration and %s were left alone.\n",
		r.nodeName(), r.cfg.Modules.Edged.RootDirectory)
	fmt.Fprintf(out, "The node object stays in the cluster; to remove it, on the cloud side: kubectl delete node %s\n", r.nodeName())
	return nil
}

// Confirm asks question on out and reads a yes or no from in. Anything but
// y or yes, an empty line and end of input included, is no.
func Confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N]: ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	if line == "" || !strings.HasSuffix(line, "\n") {
		// No answer: end the prompt's line before the caller's message.
		fmt.Fprintln(out)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

type reset struct {
	o    ResetOptions
	sys  System
	goos string
	cfg  *v1alpha2.EdgeCoreConfig
}

// newReset reads the node's configuration for the paths to remove. A
// missing or unreadable one gives the default paths, which is where join
// puts everything; out says which was used.
func newReset(o ResetOptions, sys System, out io.Writer) *reset {
	if o.ServiceName == "" {
		o.ServiceName = service.DefaultName
	}
	r := &reset{o: o, sys: sys, goos: o.Host.GOOS}
	ok, err := exists(sys.FS, o.ConfigFile)
	if err == nil && ok {
		r.cfg, err = sys.LoadConfig(o.ConfigFile)
	}
	if r.cfg != nil {
		return r
	}
	switch {
	case err != nil:
		fmt.Fprintf(out, "Cannot read %s (%v); removing from the default locations.\n", o.ConfigFile, firstLine(err))
	default:
		fmt.Fprintf(out, "No configuration at %s; removing from the default locations.\n", o.ConfigFile)
	}
	// Sample fails only for an unknown kind.
	r.cfg, _ = config.Sample(config.KindDefault, o.Host)
	return r
}

func (r *reset) nodeName() string { return r.cfg.Modules.Edged.HostnameOverride }

func (r *reset) certFiles() []string {
	hub := r.cfg.Modules.EdgeHub
	return []string{hub.TLSCAFile, hub.TLSCertFile, hub.TLSPrivateKeyFile}
}

func (r *reset) dbFiles() []string {
	db := r.cfg.DataBase.DataSource
	return []string{db, db + "-journal", db + "-wal", db + "-shm"}
}

// emptyDirs are removed at the end when nothing is left in them, deepest
// first: the directories of the files removed and the kubeedge directory.
func (r *reset) emptyDirs() []string {
	var dirs []string
	add := func(d string) {
		for _, have := range dirs {
			if ospath.Same(r.goos, have, d) {
				return
			}
		}
		dirs = append(dirs, d)
	}
	add(ospath.Dir(r.goos, r.o.ConfigFile))
	for _, f := range r.certFiles() {
		add(ospath.Dir(r.goos, f))
	}
	if !r.o.KeepData {
		add(ospath.Dir(r.goos, r.cfg.DataBase.DataSource))
	}
	if k := r.cfg.Modules.Edged.TailoredKubeletConfig; k != nil && k.StaticPodPath != "" {
		add(k.StaticPodPath)
	}
	add(config.NewLayout(r.o.Host).KubeEdgeDir)
	// Deeper paths first, so that a parent is tried after its children.
	for i := 1; i < len(dirs); i++ {
		for k := i; k > 0 && len(dirs[k]) > len(dirs[k-1]); k-- {
			dirs[k], dirs[k-1] = dirs[k-1], dirs[k]
		}
	}
	return dirs
}

const fixResetAgain = "then run reset again; it skips what is already gone"

func (r *reset) plan() Plan {
	logDir := ospath.Dir(r.goos, r.o.LogFile)
	steps := []Step{
		{
			Name:        stepElevated,
			Description: "require a process started with \"Run as administrator\"",
			Do: func(_ context.Context, out io.Writer) error {
				return checkElevated(r.sys, "reset", out)
			},
		},
		{
			Name:        "stop and remove the service",
			Description: fmt.Sprintf("stop the service %q, wait until it has stopped, and delete it", r.o.ServiceName),
			Do:          r.removeService,
		},
		{
			Name:        "remove the configuration",
			Description: "remove " + r.o.ConfigFile,
			Do: func(_ context.Context, out io.Writer) error {
				return r.removeFiles(out, []string{r.o.ConfigFile})
			},
		},
		{
			Name:        "remove the certificates",
			Description: "remove " + strings.Join(r.certFiles(), ", "),
			Do: func(_ context.Context, out io.Writer) error {
				return r.removeFiles(out, r.certFiles())
			},
		},
	}
	if !r.o.KeepData {
		steps = append(steps, Step{
			Name:        "remove the database",
			Description: "remove " + r.cfg.DataBase.DataSource + " (--keep-data keeps it)",
			Do: func(_ context.Context, out io.Writer) error {
				return r.removeFiles(out, r.dbFiles())
			},
		})
	}
	steps = append(steps,
		Step{
			Name:        "remove the logs",
			Description: "remove " + logDir + " and everything in it",
			Do: func(_ context.Context, out io.Writer) error {
				ok, err := exists(r.sys.FS, logDir)
				if err != nil {
					return err
				}
				if err := RemoveTree(r.sys.FS, r.goos, logDir); err != nil {
					return WithFix(err, "close whatever holds the files open (an editor, a `Get-Content -Wait`), "+fixResetAgain)
				}
				if ok {
					fmt.Fprintf(out, "removed %s\n", logDir)
				} else {
					fmt.Fprintf(out, "%s does not exist\n", logDir)
				}
				return nil
			},
		},
	)
	if r.o.Network != nil {
		steps = append(steps, Step{
			Name:        "remove the pod network",
			Description: r.o.Network.Describe(),
			Do: func(ctx context.Context, out io.Writer) error {
				return WithFix(r.o.Network.Remove(ctx, out), "run reset --network again once that is fixed; it skips what is already gone")
			},
		})
	}
	steps = append(steps,
		Step{
			Name:        "remove empty directories",
			Description: "remove " + strings.Join(r.emptyDirs(), ", ") + " where empty",
			Do:          r.removeEmptyDirs,
		},
	)
	return Plan{Verb: "reset", Steps: steps}
}

func (r *reset) removeService(_ context.Context, out io.Writer) error {
	err := r.sys.Services.Uninstall(r.o.ServiceName)
	switch {
	case err == nil:
		fmt.Fprintf(out, "stopped and removed service %q\n", r.o.ServiceName)
		return nil
	case errors.Is(err, service.ErrNotInstalled):
		fmt.Fprintf(out, "service %q is not installed\n", r.o.ServiceName)
		return nil
	case errors.Is(err, service.ErrAccessDenied):
		return WithFix(err, fixElevated)
	}
	return err
}

func (r *reset) removeFiles(out io.Writer, files []string) error {
	var errs []error
	for _, f := range files {
		removed, err := removeFile(r.sys.FS, f)
		switch {
		case err != nil:
			errs = append(errs, err)
		case removed:
			fmt.Fprintf(out, "removed %s\n", f)
		}
	}
	if len(errs) > 0 {
		return WithFix(errors.Join(errs...), "make sure edgecore is stopped (`edgecore.exe service status`) and nothing else holds the files open, "+fixResetAgain)
	}
	return nil
}

func (r *reset) removeEmptyDirs(_ context.Context, out io.Writer) error {
	var errs []error
	for _, d := range r.emptyDirs() {
		ok, err := exists(r.sys.FS, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		removed, err := removeIfEmpty(r.sys.FS, d)
		switch {
		case err != nil:
			errs = append(errs, err)
		case removed:
			fmt.Fprintf(out, "removed %s\n", d)
		default:
			fmt.Fprintf(out, "kept %s: it is not empty\n", d)
		}
	}
	if len(errs) > 0 {
		return WithFix(errors.Join(errs...), fixResetAgain)
	}
	return nil
}
