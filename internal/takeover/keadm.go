package takeover

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// What keadm v1.21 to v1.23 and the upstream edgecore it installs leave
// in the node's folders, read at those tags of upstream:
//
//   - keadm's join (edge/join.go createDirs, join_windows.go): the
//     folders C:\etc\kubeedge, ...\config, C:\var\log\kubeedge and
//     C:\var\lib\kubeedge; config\edgecore.yaml; bootstrap-edgecore.conf,
//     removed when the join ends (so refused: a join still runs or was
//     cut short, and edgecore reads the token in it at every start); the
//     release tarball
//     kubeedge-v<version>-windows-<arch>.tar.gz and its checksum file in
//     the tarball path, C:\etc\kubeedge\ unless --tarballpath says
//     otherwise (util/common_windows.go installKubeEdge: the unpacked
//     folder is removed, the tarball stays); C:\usr\local\bin\edgecore.exe.
//   - the service's log: --log-file, C:\var\log\kubeedge\edgecore.log
//     (v1.23); out.log and err.log through NSSM (v1.21, v1.22).
//   - upstream's edgecore: the CA certificate, the node's certificate and
//     key (edgeHub's, and edgeStream's when it is enabled), the database
//     the configuration names, and what the embedded kubelet keeps in its
//     root directory and writes as pod logs.
//
// Everything else is refused, each entry named with its fix: another
// account may have put it there for the node to act on as SYSTEM (a
// backup that rollback would restore, an upgrade journal that the node
// would finish, image archives it imports at its start, a static pod, a
// flexvolume driver, an SQLite journal played into the database at its
// next open, a DLL beside the binary).

// kubeletRootEntries are what the kubelet keeps in its root directory
// (pkg/kubelet/config/defaults.go and the managers' state files), whose
// contents are the kubelet's own: they are not walked.
var kubeletRootEntries = []string{
	"pods", "plugins", "plugins_registry", "pod-resources", "checkpoints", "device-plugins",
	"cpu_manager_state", "memory_manager_state", "dra_manager_state",
}

// keadmLogs are the service's logs keadm's NSSM service of v1.21 and
// v1.22 wrote beside the log folder (util/nssm.go).
var keadmLogs = []string{"out.log", "err.log"}

// podLogDir is the name of a pod's log folder: namespace_name_uid.
var podLogDir = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?_[a-z0-9]([-a-z0-9.]*[a-z0-9])?_[0-9a-f-]{1,64}$`)

// keadmTarball is the release tarball and its checksum file keadm leaves
// in its tarball path.
var keadmTarball = regexp.MustCompile(`^(checksum_)?kubeedge-v\d+\.\d+\.\d+[-+0-9A-Za-z.]*-windows-[a-z0-9]+\.tar\.gz(\.txt)?$`)

// leaves is what may be in the node's folders, keyed by ospath.Key.
type leaves struct {
	goos string
	// files are regular files; dirs are folders walked into (the folders
	// above what is allowed); opaque are entries whose contents belong to
	// another owner (the kubelet), not walked.
	files, dirs, opaque map[string]bool
	// named allows entries by name in a folder (key of the folder).
	named map[string]*regexp.Regexp
	// why says what a refused entry would have been to the node, by the
	// key of the folder that holds it or of the entry.
	why map[string]string
}

// Stray is an entry of the node's folders that keadm does not leave.
type Stray struct {
	Path string
	// Why is what the node would do with it.
	Why string
}

// keadmLeaves is what a node keadm joined, configured by c and run by the
// service as exe with its log in logFile, leaves in its folders.
func keadmLeaves(c *v1alpha2.EdgeCoreConfig, l config.Layout, exe, configFile, logFile string) leaves {
	g := l.GOOS
	lv := leaves{goos: g, files: map[string]bool{}, dirs: map[string]bool{}, opaque: map[string]bool{}, named: map[string]*regexp.Regexp{}, why: map[string]string{}}
	file := func(p string) {
		if p != "" {
			lv.files[ospath.Key(g, p)] = true
		}
	}
	for _, p := range []string{exe, configFile, logFile} {
		file(p)
	}
	// keadm's join removes it when it ends, and edgecore takes the token
	// from it at every start.
	lv.why[ospath.Key(g, ospath.Join(g, l.KubeEdgeDir, "bootstrap-edgecore.conf"))] = "keadm's bootstrap token file, which keadm's join removes when it ends: " +
		"a join still runs or was interrupted, and edgecore would take the token in it at every start"
	for _, n := range keadmLogs {
		file(ospath.Join(g, ospath.Dir(g, logFile), n))
	}
	lv.named[ospath.Key(g, l.KubeEdgeDir)] = keadmTarball
	if c.DataBase != nil {
		file(c.DataBase.DataSource)
		db := c.DataBase.DataSource
		for _, s := range []string{"-journal", "-wal", "-shm"} {
			lv.why[ospath.Key(g, db+s)] = "an SQLite journal of the database, which SQLite plays into " + db + " when the node opens it"
		}
	}
	m := c.Modules
	if m != nil && m.EdgeHub != nil {
		file(m.EdgeHub.TLSCAFile)
		file(m.EdgeHub.TLSCertFile)
		file(m.EdgeHub.TLSPrivateKeyFile)
	}
	if m != nil && m.EdgeStream != nil && m.EdgeStream.Enable {
		file(m.EdgeStream.TLSTunnelCAFile)
		file(m.EdgeStream.TLSTunnelCertFile)
		file(m.EdgeStream.TLSTunnelPrivateKeyFile)
	}
	if m != nil && m.Edged != nil {
		root := m.Edged.RootDirectory
		if root != "" {
			lv.dirs[ospath.Key(g, root)] = true
			for _, n := range kubeletRootEntries {
				lv.opaque[ospath.Key(g, ospath.Join(g, root, n))] = true
			}
		}
		if k := m.Edged.TailoredKubeletConfig; k != nil {
			if k.StaticPodPath != "" {
				lv.dirs[ospath.Key(g, k.StaticPodPath)] = true
				lv.why[ospath.Key(g, k.StaticPodPath)] = "a static pod manifest, whose pod the kubelet runs without the cloud"
			}
			if k.PodLogsDir != "" {
				lv.dirs[ospath.Key(g, k.PodLogsDir)] = true
				lv.named[ospath.Key(g, k.PodLogsDir)] = podLogDir
			}
			if k.VolumePluginDir != "" {
				lv.why[ospath.Key(g, k.VolumePluginDir)] = "a flexvolume driver, which the kubelet runs as SYSTEM"
			}
		}
	}
	// The folders above every allowed entry are walked.
	var above []string
	for k := range lv.files {
		above = append(above, k)
	}
	for k := range lv.opaque {
		above = append(above, k)
	}
	for k := range lv.dirs {
		above = append(above, k)
	}
	for _, k := range above {
		for _, a := range ospath.Ancestors(g, k)[1:] {
			lv.dirs[ospath.Key(g, a)] = true
		}
	}
	lv.why[ospath.Key(g, ospath.Dir(g, exe))] = "a file beside the edgecore.exe the service runs, where Windows looks first for the DLLs that program loads"
	lv.why[ospath.Key(g, l.BackupDir)] = "backups, which `edgecore.exe rollback` puts back as the service's binary, configuration and database"
	lv.why[ospath.Key(g, l.UpgradeDir)] = "the upgrade journal and staged binaries, which the node carries out and starts as SYSTEM"
	lv.why[ospath.Key(g, l.ImagesDir)] = "image archives, which the node imports into containerd at its start"
	lv.why[ospath.Key(g, ospath.Join(g, ospath.Dir(g, configFile), "upgrade.yaml"))] = "the upgrade settings, which name where the binaries that run as SYSTEM come from"
	return lv
}

// walk lists every entry under roots that lv does not allow. list reads a
// folder without following links (os.ReadDir); a root that does not
// exist is skipped.
func (lv leaves) walk(roots []string, list func(dir string) ([]fs.DirEntry, error)) ([]Stray, error) {
	var out []Stray
	seen := map[string]bool{}
	var visit func(dir string) error
	visit = func(dir string) error {
		if seen[ospath.Key(lv.goos, dir)] {
			return nil
		}
		seen[ospath.Key(lv.goos, dir)] = true
		entries, err := list(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		named := lv.named[ospath.Key(lv.goos, dir)]
		for _, e := range entries {
			p := ospath.Join(lv.goos, dir, e.Name())
			k := ospath.Key(lv.goos, p)
			t := e.Type()
			switch {
			case t&fs.ModeSymlink != 0 || t&(fs.ModeType&^fs.ModeDir) != 0:
				out = append(out, Stray{Path: p, Why: "a link or another special entry, through which the node's reads and writes as SYSTEM would reach elsewhere"})
			case lv.opaque[k]:
			case lv.files[k] && t.IsRegular():
			case lv.dirs[k] && t.IsDir():
				if err := visit(p); err != nil {
					return err
				}
			case named != nil && named.MatchString(e.Name()):
			default:
				out = append(out, Stray{Path: p, Why: lv.whyOf(dir, p)})
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := visit(r); err != nil {
			return out, err
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out, nil
}

// whyOf is what p, in dir, would be to the node.
func (lv leaves) whyOf(dir, p string) string {
	if w := lv.why[ospath.Key(lv.goos, p)]; w != "" {
		return w
	}
	for d := dir; ; d = ospath.Dir(lv.goos, d) {
		if w := lv.why[ospath.Key(lv.goos, d)]; w != "" {
			return w
		}
		if up := ospath.Dir(lv.goos, d); up == d {
			break
		}
	}
	return "not something keadm or upstream's edgecore writes there"
}

// StrayError refuses a takeover for the entries keadm does not leave.
type StrayError struct{ Strays []Stray }

func (e *StrayError) Error() string {
	var b strings.Builder
	b.WriteString("the node's folders hold what keadm v1.21 to v1.23 and upstream's edgecore do not leave there; another account may have put it there for this build to act on as SYSTEM, so it is not taken over:")
	for _, s := range e.Strays {
		fmt.Fprintf(&b, "\n  %s: %s", s.Path, s.Why)
	}
	return b.String()
}

// Fix says what to do about every entry.
func (e *StrayError) Fix() string {
	fix := "for each entry, check who created it (`Get-Acl '<path>' | Format-List Owner`) and what it holds; move it out of the node's folders " +
		"(or delete it), run takeover again, and put back what you need once takeover has restricted the folders"
	for _, s := range e.Strays {
		if strings.Contains(s.Why, "journal and staged") || strings.Contains(s.Why, "backups") {
			fix += "; a takeover that was put back leaves the upgrade and backup folders: if `edgecore.exe takeover` ran here before, " +
				"keadm's files were restored from them and they can be deleted"
			break
		}
	}
	return fix
}
