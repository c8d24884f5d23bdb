package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/release"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// An upgrade carries the container runtime the release bundles
// (internal/runtimeinstall) when join installed it from an earlier
// release's bundle, which its record says: the package's programs are
// compared, digest by digest, with the ones in place; when any differs
// they are unpacked with the binary, backed up with it, swapped with it
// after containerd's service is stopped, and containerd is started and
// must answer CRI before the new edgecore starts. A rollback puts the
// backup's programs back and starts containerd on them. containerd is
// restarted only when its programs change: the containers keep running
// across the restart either way, each under its own runhcs shim process,
// which containerd does not end when it stops and reconnects to when it
// starts. A runtime join did not install (no record) is the operator's,
// and never touched.

// RuntimeEnv is where the runtime join installs lives on this host, and
// how to ask it for CRI. The zero value turns the runtime's part off.
type RuntimeEnv struct {
	Layout config.Layout
	// CRI asks the runtime at an endpoint for Version and Status.
	CRI func(ctx context.Context, endpoint string) (hostprobe.CRIStatus, error)
}

func (r RuntimeEnv) enabled() bool { return r.Layout.ContainerdDir != "" && r.CRI != nil }

// RuntimeSwap is the runtime part of a journal: the files an upgrade
// replaces (or a rollback restores) and the service that runs them.
type RuntimeSwap struct {
	// Service is containerd's service; Endpoint its CRI, asked once it
	// runs again.
	Service  string `json:"service"`
	Endpoint string `json:"endpoint"`
	// From and To are the bundle's versions before and after, for the
	// output.
	From map[string]string `json:"from,omitempty"`
	To   map[string]string `json:"to,omitempty"`
	// Files are the runtime's files, the record join keeps among them.
	Files []RuntimeFile `json:"files"`
	// Old are the names in-use programs (a running container's shim)
	// were renamed to, removed once the journal ends.
	Old []string `json:"old,omitempty"`
}

// RuntimeFile is one file of the runtime.
type RuntimeFile struct {
	// Target is where it is installed; Backup its name in the backup
	// directory.
	Target string `json:"target"`
	Backup string `json:"backup"`
	// Staged is the upgrade's verified copy and SHA256 its checksum; both
	// "" in a rollback, which takes the backup's.
	Staged string `json:"staged,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// StagedRuntime is the runtime a staged package carries.
type StagedRuntime struct {
	Versions map[string]string `json:"versions,omitempty"`
	// Sums are the package's checksums of the bundle's programs, by their
	// names in the package (runtimeinstall.File.PackagePath).
	Sums map[string]string `json:"sums"`
	// Dir holds the programs unpacked (<Sub>\<Name>); "" when they were
	// not, because this host's runtime did not need them.
	Dir string `json:"dir,omitempty"`
}

// runtimeBackupDir is the folder of a backup that holds the runtime's
// files.
const runtimeBackupDir = "runtime"

func runtimeBackupName(goos, name string) string { return ospath.Join(goos, runtimeBackupDir, name) }

// runtimeHost is the part of runtimeinstall's host an upgrade reads the
// record through.
func runtimeHost(e Env) runtimeinstall.Host {
	return runtimeinstall.Host{
		Exists: func(p string) (bool, error) {
			_, err := e.FS.Stat(p)
			if isNotExist(err) {
				return false, nil
			}
			return err == nil, err
		},
		ReadFile: e.FS.ReadFile,
	}
}

// installedRuntime reads join's record of the runtime it installed; ok
// is false when join installed none (the host's own, or none).
func installedRuntime(e Env) (runtimeinstall.Record, bool, error) {
	if !e.Runtime.enabled() {
		return runtimeinstall.Record{}, false, nil
	}
	return runtimeinstall.ReadRecord(runtimeHost(e), e.Runtime.Layout)
}

// runtimeDiffers reports whether any installed program's checksum is not
// the package's (sums, by package path). A program join installed that is
// gone is an error: the installation is not one an upgrade can back up.
func runtimeDiffers(e Env, sums map[string]string) (bool, error) {
	differs := false
	for _, f := range runtimeinstall.Files {
		target := f.Target(e.Runtime.Layout)
		have, err := e.FS.SHA256(target)
		if err != nil {
			return false, fmt.Errorf("the container runtime join installed is incomplete (%s: %v): fix: run `edgecore.exe reset` and `edgecore.exe join` again, which reinstall it, then upgrade", target, err)
		}
		if have != sums[f.PackagePath()] {
			differs = true
		}
	}
	return differs, nil
}

// stageRuntime reads the runtime package p carries and, when this host
// runs one join installed whose programs differ, unpacks them into
// dir\runtime. A package without one stages none; a package with part of
// one is refused.
func stageRuntime(e Env, p *release.Package, dir string, out io.Writer) (*StagedRuntime, error) {
	sums := map[string]string{}
	for _, f := range runtimeinstall.Files {
		if s, ok := p.Files[f.PackagePath()]; ok {
			sums[f.PackagePath()] = s
		}
	}
	switch len(sums) {
	case 0:
		return nil, nil
	case len(runtimeinstall.Files):
	default:
		return nil, fmt.Errorf("package %s: its %s folder has %d of the %d programs of the container runtime: use a package made by build/package.sh", p.Path, runtimeinstall.BundleDir, len(sums), len(runtimeinstall.Files))
	}
	sr := &StagedRuntime{Sums: sums}
	manifest := runtimeinstall.BundleDir + "/" + runtimeinstall.ManifestFile
	if _, ok := p.Files[manifest]; ok {
		if err := p.Extract(manifest, ospath.Join(e.GOOS, dir, runtimeinstall.BundleDir, runtimeinstall.ManifestFile)); err != nil {
			return nil, err
		}
		sr.Versions = runtimeinstall.BundleVersions(runtimeHost(e), e.GOOS, dir)
	}
	_, installed, err := installedRuntime(e)
	if err != nil || !installed {
		// planRuntime says why the runtime is kept.
		return sr, nil
	}
	differs, err := runtimeDiffers(e, sums)
	if err != nil || !differs {
		return sr, nil
	}
	rtDir := ospath.Join(e.GOOS, dir, runtimeinstall.BundleDir)
	for _, f := range runtimeinstall.Files {
		if err := p.Extract(f.PackagePath(), ospath.Join(e.GOOS, rtDir, f.Sub, f.Name)); err != nil {
			return nil, err
		}
	}
	sr.Dir = rtDir
	fmt.Fprintf(out, "staged the container runtime (%s) in %s\n", versionsLine(sr.Versions), rtDir)
	return sr, nil
}

// stagedFile is where a bundle file waits in the staged runtime.
func (sr *StagedRuntime) file(goos string, f runtimeinstall.File) string {
	return ospath.Join(goos, sr.Dir, f.Sub, f.Name)
}

// check verifies that the unpacked programs are the ones verified.
func (sr *StagedRuntime) check(e Env) error {
	if sr == nil || sr.Dir == "" {
		return nil
	}
	for _, f := range runtimeinstall.Files {
		p := sr.file(e.GOOS, f)
		if sum, err := e.FS.SHA256(p); err != nil || sum != sr.Sums[f.PackagePath()] {
			return fmt.Errorf("the staged %s changed after it was verified (%v)", p, err)
		}
	}
	return nil
}

// planRuntime decides what the upgrade to st does to the container
// runtime: the swap to journal (nil when the runtime stays as it is) and
// one line saying what happens and why. It refuses (err) only an
// installation join made that is no longer whole.
func planRuntime(e Env, f Facts, in Installed, st *Staged) (*RuntimeSwap, string, error) {
	if !e.Runtime.enabled() {
		return nil, "", nil
	}
	l := e.Runtime.Layout
	rec, ok, err := installedRuntime(e)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("kept as it is: %v", err), nil
	case !ok:
		return nil, fmt.Sprintf("the host's own (join did not install it: no %s), kept as it is", runtimeinstall.RecordFile(l)), nil
	case st.Runtime == nil:
		return nil, fmt.Sprintf("the package carries none: containerd (%s) is kept and not restarted", versionsLine(rec.Versions)), nil
	}
	differs, err := runtimeDiffers(e, st.Runtime.Sums)
	if err != nil {
		return nil, "", err
	}
	if !differs {
		return nil, fmt.Sprintf("the package's is the one installed (%s): containerd is not restarted, running containers are not touched", versionsLine(rec.Versions)), nil
	}
	if st.Runtime.Dir == "" {
		return nil, "", fmt.Errorf("the package's container runtime differs from the installed one, which changed after the package was staged: run the upgrade again")
	}
	if err := st.Runtime.check(e); err != nil {
		return nil, "", err
	}
	endpoint, err := criEndpoint(f, in)
	if err != nil {
		return nil, "", err
	}
	rs := &RuntimeSwap{Service: runtimeinstall.ServiceName, Endpoint: endpoint, From: rec.Versions, To: st.Runtime.Versions}
	for _, bf := range runtimeinstall.Files {
		rs.Files = append(rs.Files, RuntimeFile{Target: bf.Target(l), Backup: runtimeBackupName(e.GOOS, bf.Name),
			Staged: st.Runtime.file(e.GOOS, bf), SHA256: st.Runtime.Sums[bf.PackagePath()]})
	}
	// join's record names the same files, with the versions installed.
	rec.Versions = st.Runtime.Versions
	data, err := rec.Encode()
	if err != nil {
		return nil, "", err
	}
	staged := ospath.Join(e.GOOS, st.Runtime.Dir, runtimeinstall.RecordName)
	if err := e.FS.WriteFile(staged, data); err != nil {
		return nil, "", err
	}
	sum, err := e.FS.SHA256(staged)
	if err != nil {
		return nil, "", err
	}
	rs.Files = append(rs.Files, RuntimeFile{Target: runtimeinstall.RecordFile(l), Backup: runtimeBackupName(e.GOOS, runtimeinstall.RecordName),
		Staged: staged, SHA256: sum})
	return rs, fmt.Sprintf("containerd %s is replaced by the package's %s: it is backed up with edgecore, stopped while its programs are swapped (running containers keep running) and must answer CRI at %s before edgecore starts",
		versionsLine(rs.From), versionsLine(rs.To), endpoint), nil
}

// rollbackRuntime is the runtime part of a rollback to backup b: the
// runtime files it holds, when it holds them (an upgrade that replaced
// the runtime made it) and join's record still says the runtime is its.
func rollbackRuntime(e Env, f Facts, in Installed, dir string, b *BackupInfo) (*RuntimeSwap, string, error) {
	if len(b.Runtime) == 0 || !e.Runtime.enabled() {
		return nil, "", nil
	}
	rec, ok, err := installedRuntime(e)
	if err != nil || !ok {
		return nil, fmt.Sprintf("the backup holds a container runtime, but join's record of one on this host is gone (%v): the runtime is kept as it is", err), nil
	}
	endpoint, err := criEndpoint(f, in)
	if err != nil {
		return nil, "", err
	}
	rs := &RuntimeSwap{Service: runtimeinstall.ServiceName, Endpoint: endpoint, From: rec.Versions}
	names := make([]string, 0, len(b.Runtime))
	for name := range b.Runtime {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rs.Files = append(rs.Files, RuntimeFile{Target: b.Runtime[name], Backup: name})
	}
	if data, err := e.FS.ReadFile(ospath.Join(e.GOOS, dir, runtimeBackupName(e.GOOS, runtimeinstall.RecordName))); err == nil {
		var old runtimeinstall.Record
		if json.Unmarshal(data, &old) == nil {
			rs.To = old.Versions
		}
	}
	if err := checkRuntimeSwap(e, rs); err != nil {
		return nil, "", fmt.Errorf("the backup %s: %w", dir, err)
	}
	return rs, fmt.Sprintf("the backup's (%s) goes back where it differs from the installed %s; containerd is restarted only then", versionsLine(rs.To), versionsLine(rs.From)), nil
}

func criEndpoint(f Facts, in Installed) (string, error) {
	if f.CRIEndpoint == nil {
		return "", errors.New("the node's CRI endpoint is unknown")
	}
	ep, err := f.CRIEndpoint(in.ConfigFile)
	if err != nil {
		return "", fmt.Errorf("reading the CRI endpoint from %s: %w", in.ConfigFile, err)
	}
	if ep == "" {
		return "", fmt.Errorf("%s names no CRI endpoint (modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint), so containerd could not be checked after its upgrade: set it, e.g. to npipe://./pipe/containerd-containerd", in.ConfigFile)
	}
	return ep, nil
}

// checkRuntimeSwap refuses a journal's runtime part that names anything
// but the runtime files join installs, their backup names and the
// staging directory: they are copied over as SYSTEM.
func checkRuntimeSwap(e Env, rs *RuntimeSwap) error {
	if !e.Runtime.enabled() {
		return errors.New("it replaces a container runtime, and this host has no place for one")
	}
	if rs.Service != runtimeinstall.ServiceName {
		return fmt.Errorf("runtime.service is %q, not %q", rs.Service, runtimeinstall.ServiceName)
	}
	l := e.Runtime.Layout
	known := map[string]string{ospath.Key(e.GOOS, runtimeinstall.RecordFile(l)): runtimeinstall.RecordName}
	for _, f := range runtimeinstall.Files {
		known[ospath.Key(e.GOOS, f.Target(l))] = f.Name
	}
	var targets []string
	for _, f := range rs.Files {
		name, ok := known[ospath.Key(e.GOOS, f.Target)]
		if !ok {
			return fmt.Errorf("runtime file %s is not one join installs", f.Target)
		}
		if f.Backup != runtimeBackupName(e.GOOS, name) {
			return fmt.Errorf("runtime file %s has the backup name %s, not %s", f.Target, f.Backup, runtimeBackupName(e.GOOS, name))
		}
		if f.Staged != "" && !ospath.Within(e.GOOS, e.Paths.StateDir, f.Staged) {
			return fmt.Errorf("runtime file %s is staged at %s, outside %s", f.Target, f.Staged, e.Paths.StateDir)
		}
		targets = append(targets, f.Target)
	}
	for _, o := range rs.Old {
		ok := false
		k := ospath.Key(e.GOOS, o)
		for _, t := range targets {
			if k == ospath.Key(e.GOOS, t+".old") || strings.HasPrefix(k, ospath.Key(e.GOOS, t+".old-")) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("runtime.old names %s, not a renamed runtime file", o)
		}
	}
	return nil
}

// swapRuntime stops containerd and puts the staged runtime in place.
func (d *driver) swapRuntime() error {
	e, rs := d.e, d.j.Runtime
	if err := e.Services.Stop(rs.Service); err != nil {
		return fmt.Errorf("stopping the service %s: %v", rs.Service, err)
	}
	d.printf("stopped the service %s; running containers keep running, each under its own runhcs shim\n", rs.Service)
	for _, f := range rs.Files {
		if err := d.placeRuntimeFile(f.Staged, f.SHA256, f.Target); err != nil {
			return err
		}
	}
	d.printf("the container runtime is now %s\n", versionsLine(rs.To))
	return nil
}

// restoreRuntime puts the backup's runtime files back where they differ
// from the ones in place, containerd stopped; when none differs
// containerd is left running.
func (d *driver) restoreRuntime(b *BackupInfo) error {
	e, rs := d.e, d.j.Runtime
	var changed []RuntimeFile
	for _, f := range rs.Files {
		want := b.Files[f.Backup]
		if want == "" {
			return fmt.Errorf("the backup %s holds no %s", d.j.Backup, f.Backup)
		}
		if have, err := e.FS.SHA256(f.Target); err != nil || have != want {
			changed = append(changed, f)
		}
	}
	if len(changed) == 0 {
		d.printf("the container runtime is the backup's already: containerd is not restarted\n")
		return nil
	}
	if err := e.Services.Stop(rs.Service); err != nil {
		return fmt.Errorf("stopping the service %s: %v", rs.Service, err)
	}
	d.printf("stopped the service %s; running containers keep running\n", rs.Service)
	for _, f := range changed {
		if err := d.placeRuntimeFile(ospath.Join(e.GOOS, d.j.Backup, f.Backup), b.Files[f.Backup], f.Target); err != nil {
			return err
		}
	}
	d.printf("restored the container runtime (%d files) from %s\n", len(changed), d.j.Backup)
	return nil
}

// placeRuntimeFile puts src (checksum sum) at dst. A program a running
// container's shim was started from cannot be replaced, only renamed:
// it is renamed away (recorded first, for the cleanup) and the copy put
// at its name. containerd itself is stopped, so its program is replaced
// in one rename and the service always finds a whole one.
func (d *driver) placeRuntimeFile(src, sum, dst string) error {
	e, rs := d.e, d.j.Runtime
	if have, err := e.FS.SHA256(dst); err == nil && have == sum {
		return nil
	}
	if err := e.FS.CopyFile(src, dst); err != nil {
		old := dst + ".old"
		if rerr := e.FS.Remove(old); rerr != nil && !isNotExist(rerr) {
			old = fmt.Sprintf("%s.old-%d", dst, e.Clock.Now().Unix())
		}
		rs.Old = append(rs.Old, old)
		if serr := d.save(); serr != nil {
			return serr
		}
		if rerr := e.FS.Rename(dst, old); rerr != nil {
			return fmt.Errorf("replace %s: %v; and renaming it away: %w", dst, err, rerr)
		}
		if err := e.FS.CopyFile(src, dst); err != nil {
			return fmt.Errorf("copy %s to %s: %w", src, dst, err)
		}
		d.printf("%s was in use (a running container's shim): renamed to %s\n", dst, old)
	}
	if have, err := e.FS.SHA256(dst); err != nil || have != sum {
		return fmt.Errorf("%s does not match the checksum it was verified with (%v): it changed on disk", dst, err)
	}
	return nil
}

// startRuntime starts containerd (nothing when it runs) and waits, on
// the driver's clock, until it answers CRI at its endpoint.
func (d *driver) startRuntime(ctx context.Context) error {
	e, rs := d.e, d.j.Runtime
	if err := e.Services.Start(rs.Service); err != nil {
		return fmt.Errorf("the service %s did not start: %v; read %s", rs.Service, err, ospath.Join(e.GOOS, e.Runtime.Layout.ContainerdDir, "containerd.log"))
	}
	timeout := time.Duration(d.j.Timeout)
	start := e.Clock.Now()
	for {
		st, err := d.askCRI(ctx)
		if err == nil {
			d.printf("%s %s answers CRI at %s\n", st.RuntimeName, st.RuntimeVersion, rs.Endpoint)
			return nil
		}
		if e.Clock.Now().Sub(start) >= timeout {
			return fmt.Errorf("containerd does not answer CRI at %s within %v: %v; read %s", rs.Endpoint, timeout, err,
				ospath.Join(e.GOOS, e.Runtime.Layout.ContainerdDir, "containerd.log"))
		}
		d.beat()
		if e.sleep(ctx, poll) {
			return fmt.Errorf("interrupted while waiting for containerd (%v)", ctx.Err())
		}
	}
}

func (d *driver) askCRI(ctx context.Context) (hostprobe.CRIStatus, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return d.e.Runtime.CRI(cctx, d.j.Runtime.Endpoint)
}

// checkRuntimeRuns is the gate's last look: containerd's service still
// runs and answers CRI once edgecore has kept running.
func (d *driver) checkRuntimeRuns(ctx context.Context) error {
	e, rs := d.e, d.j.Runtime
	if st, err := e.Services.Query(rs.Service); err == nil && st.State != service.Running {
		return fmt.Errorf("the service %s is %s after edgecore started", rs.Service, st.State)
	}
	if _, err := d.askCRI(ctx); err != nil {
		return fmt.Errorf("containerd stopped answering CRI at %s: %v", rs.Endpoint, err)
	}
	d.printf("containerd still answers CRI\n")
	return nil
}

// versionsLine is a bundle's versions for the output: "cni-plugins
// v1.10.0, containerd v2.1.4, hcsshim v0.13.0".
func versionsLine(v map[string]string) string {
	if len(v) == 0 {
		return "versions unknown"
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + v[k]
	}
	return strings.Join(parts, ", ")
}
