package preflight

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/protect/protecttest"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// aclHost is a Windows host's owners and DACLs by path.
func aclHost(sddl map[string]string) *protect.Host {
	return &protect.Host{
		Read: func(path string) (acl.Security, error) {
			s, ok := sddl[path]
			if !ok {
				return acl.Security{}, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
			}
			return acl.ParseSDDL(s)
		},
		List:     protecttest.List(func() map[string]string { return sddl }),
		Restrict: func(root string, _ func(string) bool) error { panic("preflight restricted " + root) },
		Exists: func(path string) (bool, error) {
			_, ok := sddl[path]
			return ok, nil
		},
	}
}

// protectHost is the Windows host of the protection checks.
var protectHost = config.Host{GOOS: config.Windows, Hostname: "EDGE-1"}

// sample is the default configuration of protectHost.
func sample(t *testing.T) *v1alpha2.EdgeCoreConfig {
	t.Helper()
	c, err := config.Sample(config.KindDefault, protectHost)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func protectedConfig(t *testing.T) Config {
	t.Helper()
	pc := FromConfig(sample(t), protectHost, "")
	if pc.ProtectedErr != nil || len(pc.Protected) == 0 {
		t.Fatalf("FromConfig lists no protected paths: %v", pc.ProtectedErr)
	}
	return pc
}

const (
	adminDir   = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)"
	restricted = "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	usersRead  = "O:BAD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
)

func TestProtectedPassesARestrictedNode(t *testing.T) {
	p := Probes{Protect: aclHost(map[string]string{
		`C:\etc`: adminDir, `C:\etc\kubeedge`: restricted, `C:\var`: adminDir, `C:\var\lib`: adminDir, `C:\var\lib\kubeedge`: restricted,
	})}
	rows := checkProtected(protectedConfig(t), p)
	if len(rows) != 1 || rows[0].Status != Pass || !strings.Contains(rows[0].Detail, `C:\var\lib\kubelet`) {
		t.Errorf("rows = %+v", rows)
	}
}

func TestProtectedWarnsReadableAndFailsForeignOwners(t *testing.T) {
	p := Probes{Protect: aclHost(map[string]string{
		`C:\etc`: adminDir, `C:\etc\kubeedge`: restricted,
		`C:\var`: "O:S-1-5-21-9-9-9-1001D:(A;OICI;FA;;;S-1-5-21-9-9-9-1001)", `C:\var\lib`: adminDir, `C:\var\lib\kubeedge`: usersRead,
	})}
	rows := checkProtected(protectedConfig(t), p)
	if len(rows) != 2 {
		t.Fatalf("rows = %+v", rows)
	}
	if r := rows[0]; r.Status != Fail || !strings.Contains(r.Detail, `C:\var (`) || !strings.Contains(r.Detail, "owned by S-1-5-21-9-9-9-1001") || !strings.Contains(r.Fix, `takeown /F "C:\var" /A`) {
		t.Errorf("owner row = %+v", r)
	}
	if r := rows[1]; r.Status != Warn || !strings.Contains(r.Detail, `C:\var\lib\kubeedge`) || !strings.Contains(r.Detail, `BUILTIN\Users may read`) || r.Fix == "" {
		t.Errorf("readable row = %+v", r)
	}
	if ExitCode(rows) != 1 {
		t.Error("a directory another account owns must fail preflight")
	}
}

func TestProtectedFailsAWindowsDirectoryInTheConfiguration(t *testing.T) {
	c := sample(t)
	c.Modules.Edged.RootDirectory = `C:\Windows`
	rows := checkProtected(FromConfig(c, protectHost, ""), Probes{Protect: aclHost(nil)})
	if len(rows) != 1 || rows[0].Status != Fail || !strings.Contains(rows[0].Detail, `modules.edged.rootDirectory: C:\Windows`) {
		t.Errorf("rows = %+v", rows)
	}
}

func TestProtectedWithoutAProbeWarns(t *testing.T) {
	rows := checkProtected(protectedConfig(t), Probes{})
	if len(rows) != 1 || rows[0].Status != Warn {
		t.Errorf("rows = %+v", rows)
	}
}

// A volumePluginDir the configuration puts under C:\usr, whose parents
// the kubelet made with C:\'s ACL on a client edition, fails: others may
// rename them and add a driver the kubelet runs as SYSTEM.
func TestProtectedFailsAParentOthersMayRename(t *testing.T) {
	c := sample(t)
	c.Modules.Edged.TailoredKubeletConfig.VolumePluginDir = `C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec`
	clientParent := "O:SYD:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)(A;ID;0x1301bf;;;AU)"
	p := Probes{Protect: aclHost(map[string]string{
		`C:\usr`: clientParent, `C:\usr\libexec`: clientParent, `C:\usr\libexec\kubernetes`: clientParent,
		`C:\usr\libexec\kubernetes\kubelet-plugins`: clientParent, `C:\usr\libexec\kubernetes\kubelet-plugins\volume`: clientParent,
		`C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec`: clientParent,
	})}
	rows := checkProtected(FromConfig(c, protectHost, ""), p)
	if len(rows) != 6 {
		t.Fatalf("rows = %+v, want the 5 parents failed and the directory warned", rows)
	}
	if r := rows[0]; r.Status != Fail || !strings.HasPrefix(r.Detail, `C:\usr\libexec\kubernetes\kubelet-plugins\volume (the directory of modules.edged.tailoredKubeletConfig.volumePluginDir) is a parent that others may rename`) ||
		!strings.Contains(r.Fix, `icacls "C:\usr\libexec\kubernetes\kubelet-plugins\volume" /remove:g *S-1-5-11`) {
		t.Errorf("parent row = %+v", r)
	}
	if r := rows[5]; r.Status != Warn || !strings.Contains(r.Detail, `C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec (the directory of modules.edged.tailoredKubeletConfig.volumePluginDir) differs`) {
		t.Errorf("directory row = %+v", r)
	}
}

// The configuration preflight checks, and the upgrade settings beside
// it, are the node's wherever they lie.
func TestProtectedReportsTheConfigurationOutsideTheNodesDirectories(t *testing.T) {
	p := Probes{Protect: aclHost(map[string]string{
		`D:\node`: adminDir, `D:\node\edgecore.yaml`: usersRead,
		`D:\node\upgrade.yaml`: "O:S-1-5-21-9-9-9-1001D:(A;;FA;;;S-1-5-21-9-9-9-1001)",
	})}
	rows := checkProtected(FromConfig(sample(t), protectHost, `D:\node\edgecore.yaml`), p)
	if len(rows) != 2 {
		t.Fatalf("rows = %+v", rows)
	}
	if r := rows[0]; r.Status != Warn || !strings.HasPrefix(r.Detail, `D:\node\edgecore.yaml (the configuration the service runs with`) {
		t.Errorf("configuration row = %+v", r)
	}
	if r := rows[1]; r.Status != Fail || !strings.HasPrefix(r.Detail, `D:\node\upgrade.yaml (the upgrade settings`) || !strings.Contains(r.Fix, "takeown") {
		t.Errorf("upgrade settings row = %+v", r)
	}
}

// containerd's data folders are judged where its config.toml puts them:
// one a user made, or that every user may add to, fails with its fix;
// containerd's own pass.
// A folder a local account made, and one an administrator made in a
// folder where every user may add folders: it inherits that.
const (
	userMade = "O:S-1-5-21-1-2-3-1001D:AI(A;ID;FA;;;S-1-5-21-1-2-3-1001)(A;ID;FA;;;SY)"
	usersAdd = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;CIID;0x100116;;;BU)"
)

// folderCase is a host's folders (sddl) and containerd's config.toml
// (toml, "" for none), with the rows a check of containerd's folders
// gives and what they say (folderRows).
type folderCase struct {
	name  string
	sddl  map[string]string
	toml  string
	rows  []Status
	words []string
}

func TestRuntimeFolders(t *testing.T) {
	const (
		containerdMade = "O:SYD:P(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)"
		programData    = "O:SYD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;CI;0x100116;;;BU)(A;OICI;0x1200a9;;;BU)"
	)
	pc := protectedConfig(t)
	for _, tc := range []folderCase{
		{"containerd's own", map[string]string{`C:\ProgramData`: programData, `C:\ProgramData\containerd`: containerdMade, `C:\ProgramData\containerd\root`: containerdMade},
			"", []Status{Pass}, []string{`C:\ProgramData\containerd\root`}},
		{"none yet", map[string]string{`C:\ProgramData`: programData}, "", []Status{Pass}, nil},
		{"a root a user made", map[string]string{`C:\ProgramData`: programData, `C:\ProgramData\containerd`: containerdMade, `C:\ProgramData\containerd\root`: userMade},
			"", []Status{Fail}, []string{`C:\ProgramData\containerd\root (containerd's root, with every image layer and snapshot the node runs) is owned by S-1-5-21-1-2-3-1001`}},
		{"a data folder users may add to", map[string]string{`C:\ProgramData`: programData, `C:\ProgramData\containerd`: usersAdd},
			"", []Status{Fail}, []string{`is writable by others: BUILTIN\Users may change or delete (0x100116)`}},
		{"a root elsewhere, per config.toml", map[string]string{`C:\ProgramData`: programData, `D:\ctr`: adminDir, `D:\ctr\root`: userMade},
			"version = 3\nroot = 'D:\\ctr\\root'\nstate = 'D:\\ctr\\state'\n", []Status{Fail}, []string{`D:\ctr\root (containerd's root`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			folderRows(t, pc, checkRuntimeFolders, tc.sddl, tc.toml, tc.rows, tc.words)
		})
	}
}

// folderRows runs check, a check of containerd's folders, on the host of
// sddl whose containerd has the config.toml toml ("" for none), and wants
// rows of the statuses rows whose details and fixes say words.
func folderRows(t *testing.T, pc Config, check func(Config, Probes) []Row, sddl map[string]string, toml string, rows []Status, words []string) {
	t.Helper()
	p := Probes{Protect: aclHost(sddl), ReadFile: func(path string) ([]byte, error) {
		if path == pc.Layout.ContainerdConfigFile && toml != "" {
			return []byte(toml), nil
		}
		return nil, fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
	}}
	var got []Status
	var text string
	for _, r := range check(pc, p) {
		got = append(got, r.Status)
		text += r.Name + ": " + r.Detail + " " + r.Fix + "\n"
	}
	if fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Fatalf("rows %v, want %v:\n%s", got, rows, text)
	}
	for _, w := range words {
		if !strings.Contains(text, w) {
			t.Errorf("rows lack %q:\n%s", w, text)
		}
	}
}

// containerd's CNI folders are judged where its config.toml puts them,
// entry by entry: an administrator's plugins pass, and so does a folder
// that does not exist yet; a plugin or network a user planted, or a
// folder every user may add to, fails with the path and its fix.
func TestCNIFolders(t *testing.T) {
	const guide = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 'C:\\opt\\cni\\bin'\n  conf_dir = 'C:\\etc\\cni\\net.d'\n"
	pc := protectedConfig(t)
	for _, tc := range []folderCase{
		{"the defaults, with an administrator's plugins", map[string]string{`C:\Program Files`: adminDir, `C:\Program Files\containerd`: adminDir,
			`C:\Program Files\containerd\cni\bin\win-bridge.exe`: adminDir},
			"", []Status{Pass}, []string{`C:\Program Files\containerd\cni\bin`, `C:\Program Files\containerd\cni\conf`}},
		{"none yet", map[string]string{}, guide, []Status{Pass}, []string{`C:\opt\cni\bin`, "creates a missing one so"}},
		{"a plugin a user planted", map[string]string{`C:\opt`: adminDir, `C:\opt\cni`: adminDir, `C:\opt\cni\bin`: adminDir, `C:\opt\cni\bin\nat.exe`: userMade},
			guide, []Status{Fail}, []string{`C:\opt\cni\bin\nat.exe (in C:\opt\cni\bin, a CNI plugin folder, whose every program containerd runs as SYSTEM) is owned by S-1-5-21-1-2-3-1001`,
				`takeown /F "C:\opt\cni\bin\nat.exe" /A`}},
		{"a network a user planted", map[string]string{`C:\etc`: adminDir, `C:\etc\cni`: adminDir, `C:\etc\cni\net.d`: adminDir, `C:\etc\cni\net.d\0-evil.conf`: userMade},
			guide, []Status{Fail}, []string{`C:\etc\cni\net.d\0-evil.conf (in C:\etc\cni\net.d, a CNI configuration folder`}},
		{"a plugin folder users may add to", map[string]string{`C:\opt`: adminDir, `C:\opt\cni`: adminDir, `C:\opt\cni\bin`: usersAdd},
			guide, []Status{Fail}, []string{`C:\opt\cni\bin (a CNI plugin folder, whose every program containerd runs as SYSTEM) is writable by others`, `icacls "C:\opt\cni\bin" /remove:g *S-1-5-32-545`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			folderRows(t, pc, checkCNIFolders, tc.sddl, tc.toml, tc.rows, append(tc.words, "CNI folders: "))
		})
	}
}
