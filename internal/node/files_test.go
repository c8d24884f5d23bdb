package node

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/protect/protecttest"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// disk is a Windows host's paths with their owner and DACL, keyed by
// ospath.Key, recording in log what a start made and restricted, in
// order.
type disk struct {
	sddl map[string]string
	log  []string
	// files are the files written through the host (protect's record).
	files map[string]string
}

func newDisk(paths map[string]string) *disk {
	d := &disk{sddl: map[string]string{}, files: map[string]string{}}
	for p, s := range paths {
		d.sddl[ospath.Key(config.Windows, p)] = s
	}
	return d
}

func (d *disk) host() protect.Host {
	key := func(p string) string { return ospath.Key(config.Windows, p) }
	return protect.Host{
		Read: func(p string) (acl.Security, error) {
			s, ok := d.sddl[key(p)]
			if !ok {
				return acl.Security{}, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
			}
			return acl.ParseSDDL(s)
		},
		Exists: func(p string) (bool, error) { _, ok := d.sddl[key(p)]; return ok, nil },
		Mkdir: func(p, sddl string) error {
			d.log = append(d.log, "mkdir "+p+" "+sddl)
			if sddl == "" {
				sddl = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
			}
			d.sddl[key(p)] = sddl
			return nil
		},
		List: protecttest.List(func() map[string]string { return d.sddl }),
		Restrict: func(p string, _ func(string) bool) error {
			d.log = append(d.log, "restrict "+p)
			d.sddl[key(p)] = acl.DirectorySDDL
			return nil
		},
		SDDL: func(p string) (string, error) { return d.sddl[key(p)], nil },
		SetSDDL: func(p, sddl string) error {
			d.log = append(d.log, "give back "+p+" "+sddl)
			d.sddl[key(p)] = sddl
			return nil
		},
		ReadFile: func(p string) ([]byte, error) {
			data, ok := d.files[key(p)]
			if !ok {
				return nil, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
			}
			return []byte(data), nil
		},
		WriteFile: func(p string, data []byte) error { d.files[key(p)] = string(data); return nil },
		Record:    `C:\etc\kubeedge\acl-record.json`,
		Self:      acl.SystemSID,
	}
}

const (
	startConfig = `C:\etc\kubeedge\config\edgecore.yaml`
	startExe    = `C:\Program Files\edgecore\edgecore.exe`
	// C:\Program Files and what is in it: Users read and run.
	programFiles = "O:S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464D:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
	// A folder an administrator made in C:\ on a client edition.
	othersModify = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;ID;0x1301bf;;;AU)"
)

var startHost = config.Host{GOOS: config.Windows, Hostname: "EDGE-1", NodeIP: "192.0.2.7"}

// freshDisk is a host with edgecore.exe installed and nothing of the
// node yet.
func freshDisk() *disk {
	return newDisk(map[string]string{
		`C:\`:              "O:TID:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICIIO;SDGXGWGR;;;AU)(A;;LC;;;AU)",
		`C:\Program Files`: programFiles, `C:\Program Files\edgecore`: programFiles, startExe: programFiles,
	})
}

// The first start makes every directory the node writes to protected
// from its creation, the certificate directory edgehub writes the node's
// key into among them, before Run registers the modules.
func TestPrepareFilesMakesTheDirectoriesProtectedBeforeTheModulesStart(t *testing.T) {
	c, err := config.Sample(config.KindDefault, startHost)
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.EdgeHub.Enable = true
	d := freshDisk()
	if err := prepareFiles(c, config.NewLayout(startHost), startConfig, startExe, true, d.host()); err != nil {
		t.Fatal(err)
	}
	made := strings.Join(d.log, "\n")
	for _, want := range []string{
		`mkdir C:\etc ` + acl.ParentSDDL,
		`mkdir C:\etc\kubeedge ` + acl.DirectorySDDL,
		`mkdir C:\etc\kubeedge\certs ` + "\n", // inherits C:\etc\kubeedge's
		`mkdir C:\var\lib\kubelet ` + acl.DirectorySDDL,
		`mkdir C:\var\lib\kubelet\volumeplugins ` + "\n",
		`mkdir C:\var\log\kubeedge ` + acl.DirectorySDDL,
	} {
		if !strings.Contains(made+"\n", want) {
			t.Errorf("the start did\n%s\nnothing like %q", made, want)
		}
	}
	// All of it is already as protect describes it: nothing to repair,
	// and a second start changes nothing.
	d.log = nil
	if err := prepareFiles(c, config.NewLayout(startHost), startConfig, startExe, true, d.host()); err != nil || len(d.log) != 0 {
		t.Errorf("second start = %v, did %v", err, d.log)
	}
}

// A parent others may rename, or upgrade settings another account wrote
// beside a configuration outside C:\etc\kubeedge, stop a service before
// it changes anything, naming the path and the fix; in a console the
// node runs on.
func TestPrepareFilesRefusesToStartAServiceOnFilesOthersMayReplace(t *testing.T) {
	c, err := config.Sample(config.KindDefault, startHost)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		config string
		paths  map[string]string
		wants  []string
	}{
		"C:\\etc made with C:\\'s ACL on a client edition": {
			config: startConfig,
			paths:  map[string]string{`C:\etc`: othersModify},
			wants:  []string{`C:\etc (`, "Authenticated Users has 0x1301bf", `icacls "C:\etc" /remove:g *S-1-5-11`},
		},
		"upgrade settings another account wrote": {
			config: `D:\node\edgecore.yaml`,
			paths: map[string]string{`D:\`: acl.DirectorySDDL, `D:\node`: acl.ParentSDDL, `D:\node\edgecore.yaml`: acl.DirectorySDDL,
				`D:\node\upgrade.yaml`: "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)"},
			wants: []string{`D:\node\upgrade.yaml (the upgrade settings, which name where the binaries that run as SYSTEM come from) is owned by S-1-5-21-1-2-3-1001`, "takeown"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := freshDisk()
			for p, s := range tc.paths {
				d.sddl[ospath.Key(config.Windows, p)] = s
			}
			err := prepareFiles(c, config.NewLayout(startHost), tc.config, startExe, true, d.host())
			var refused *protect.RefusedError
			if !errors.As(err, &refused) || len(d.log) != 0 {
				t.Fatalf("as a service: %v; did %v", err, d.log)
			}
			for _, w := range append(tc.wants, "the edgecore service does not start until this is fixed") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if err := prepareFiles(c, config.NewLayout(startHost), tc.config, startExe, false, d.host()); err != nil {
				t.Errorf("in a console: %v", err)
			}
			if len(d.log) == 0 {
				t.Error("in a console, the node's directories were not made")
			}
		})
	}
}

// What a local account planted among what the node reads or runs stops
// a service at its start, named; what workloads wrote into their pods'
// volumes, owned by a Windows container's account, does not, and is not
// even read.
func TestPrepareFilesJudgesWhatIsBelowTheNodesFolders(t *testing.T) {
	c, err := config.Sample(config.KindDefault, startHost)
	if err != nil {
		t.Fatal(err)
	}
	const user = "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)"
	started := func() *disk {
		d := freshDisk()
		d.sddl[ospath.Key(config.Windows, `C:\etc`)] = acl.ParentSDDL
		d.sddl[ospath.Key(config.Windows, `C:\var`)] = acl.ParentSDDL
		d.sddl[ospath.Key(config.Windows, `C:\var\lib`)] = acl.ParentSDDL
		d.sddl[ospath.Key(config.Windows, `C:\var\log`)] = acl.ParentSDDL
		for _, dir := range []string{`C:\etc\kubeedge`, `C:\var\lib\kubeedge`, `C:\var\lib\kubelet`, `C:\var\log\pods`, `C:\var\log\kubeedge`} {
			d.sddl[ospath.Key(config.Windows, dir)] = acl.DirectorySDDL
		}
		d.sddl[ospath.Key(config.Windows, `C:\var\lib\kubelet\pods\uid\volumes\kubernetes.io~empty-dir\data\out.txt`)] = "O:S-1-5-93-2-1D:(A;;FA;;;S-1-5-93-2-1)"
		return d
	}
	d := started()
	if err := prepareFiles(c, config.NewLayout(startHost), startConfig, startExe, true, d.host()); err != nil {
		t.Fatalf("a start over what a Windows container wrote into its volume: %v", err)
	}
	for _, planted := range []string{`C:\etc\kubeedge\upgrade\journal.json`, `C:\etc\kubeedge\config\upgrade.yaml`, `C:\var\lib\kubeedge\edgecore.db-journal`,
		`C:\var\lib\kubelet\volumeplugins\evil~driver\driver.exe`} {
		d := started()
		d.sddl[ospath.Key(config.Windows, planted)] = user
		err := prepareFiles(c, config.NewLayout(startHost), startConfig, startExe, true, d.host())
		var refused *protect.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(planted)+" (in ") ||
			!strings.Contains(err.Error(), "the edgecore service does not start until this is fixed") {
			t.Errorf("%s: start = %v", planted, err)
		}
		for _, l := range d.log {
			if strings.HasPrefix(l, "restrict") {
				t.Errorf("%s: the start restricted before refusing: %v", planted, d.log)
			}
		}
	}
}

// A start on a configuration that no longer names a folder the node
// restricted (a ConfigUpdateJob rolled back) gives it its ACL back when
// it is empty.
func TestPrepareFilesGivesAnUndoneFolderItsACLBack(t *testing.T) {
	c, err := config.Sample(config.KindDefault, startHost)
	if err != nil {
		t.Fatal(err)
	}
	d := freshDisk()
	const before = "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"
	d.sddl[ospath.Key(config.Windows, `D:\`)] = acl.ParentSDDL
	d.sddl[ospath.Key(config.Windows, `D:\data`)] = acl.DirectorySDDL
	d.files[ospath.Key(config.Windows, `C:\etc\kubeedge\acl-record.json`)] = `{"changed": [{"path": "D:\\data", "sddl": "` + before + `"}]}`
	if err := prepareFiles(c, config.NewLayout(startHost), startConfig, startExe, true, d.host()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(d.log, "\n"), `give back D:\data `+before) {
		t.Errorf("the start did %v, not give D:\\data its ACL back", d.log)
	}
	if strings.Contains(d.files[ospath.Key(config.Windows, `C:\etc\kubeedge\acl-record.json`)], "D:") {
		t.Errorf("the record still names D:\\data: %s", d.files[ospath.Key(config.Windows, `C:\etc\kubeedge\acl-record.json`)])
	}
}

// Every start of a node that runs pods judges containerd's CNI folders
// where its config.toml puts them: a missing one is made open to SYSTEM
// and Administrators only before anyone else makes it; an administrator's
// plugins pass; a plugin or network another account planted stops a
// service, named with its fix, before anything changes, and is logged in
// a console, where the node runs on. Without a config.toml containerd's
// defaults are judged where they exist, and nothing is made.
func TestPrepareFilesJudgesContainerdsCNIFolders(t *testing.T) {
	c, err := config.Sample(config.KindDefault, startHost)
	if err != nil {
		t.Fatal(err)
	}
	const (
		user  = "O:S-1-5-21-1-2-3-1001D:(A;;FA;;;S-1-5-21-1-2-3-1001)"
		admin = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
		toml  = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 'C:\\opt\\cni\\bin'\n  conf_dir = 'C:\\etc\\cni\\net.d'\n"
	)
	l := config.NewLayout(startHost)
	withToml := func() *disk {
		d := freshDisk()
		d.files[ospath.Key(config.Windows, l.ContainerdConfigFile)] = toml
		return d
	}
	d := withToml()
	if err := prepareFiles(c, l, startConfig, startExe, true, d.host()); err != nil {
		t.Fatal(err)
	}
	made := strings.Join(d.log, "\n") + "\n"
	for _, want := range []string{`mkdir C:\opt ` + acl.ParentSDDL + "\n", `mkdir C:\opt\cni\bin ` + acl.DirectorySDDL + "\n", `mkdir C:\etc\cni\net.d ` + acl.DirectorySDDL + "\n"} {
		if !strings.Contains(made, want) {
			t.Errorf("the start did\n%s\nnothing like %q", made, want)
		}
	}

	for _, planted := range []string{`C:\opt\cni\bin\nat.exe`, `C:\etc\cni\net.d\0-evil.conflist`} {
		for _, sddl := range []string{admin, user} {
			d := withToml()
			for _, p := range []string{`C:\opt`, `C:\opt\cni`, `C:\opt\cni\bin`, `C:\etc`, `C:\etc\cni`, `C:\etc\cni\net.d`} {
				d.sddl[ospath.Key(config.Windows, p)] = acl.ParentSDDL
			}
			d.sddl[ospath.Key(config.Windows, planted)] = sddl
			err := prepareFiles(c, l, startConfig, startExe, true, d.host())
			if sddl == admin {
				if err != nil {
					t.Errorf("%s an administrator put there: %v", planted, err)
				}
				continue
			}
			var refused *protect.RefusedError
			if !errors.As(err, &refused) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(planted)+" (in ") || !strings.Contains(err.Error(), "is owned by S-1-5-21-1-2-3-1001") ||
				!strings.Contains(err.Error(), "the edgecore service does not start until this is fixed") {
				t.Errorf("%s: start = %v", planted, err)
			}
			if len(d.log) != 0 {
				t.Errorf("%s: the start changed %v before refusing", planted, d.log)
			}
			if err := prepareFiles(c, l, startConfig, startExe, false, d.host()); err != nil {
				t.Errorf("%s: in a console: %v", planted, err)
			}
		}
	}

	d = freshDisk()
	for _, p := range []string{l.ContainerdDir, ospath.Dir(config.Windows, l.CNIBinDir), l.CNIBinDir} {
		d.sddl[ospath.Key(config.Windows, p)] = programFiles
	}
	d.sddl[ospath.Key(config.Windows, l.CNIBinDir+`\nat.exe`)] = user
	err = prepareFiles(c, l, startConfig, startExe, true, d.host())
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(l.CNIBinDir+`\nat.exe (in `)) {
		t.Errorf("a planted plugin in containerd's default folder: start = %v", err)
	}
	d = freshDisk()
	if err := prepareFiles(c, l, startConfig, startExe, true, d.host()); err != nil || strings.Contains(strings.Join(d.log, "\n"), `containerd`) {
		t.Errorf("without a config.toml: %v, did %v", err, d.log)
	}
}
